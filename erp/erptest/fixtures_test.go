package erptest_test

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
)

var update = flag.Bool("update", false, "rewrite testdata/fixtures from the fake")

// TestFixtures records each fixture from the Fake and checks the committed file is the same,
// so the httpmock responders replay exactly what the fake (and the documented wire) answers.
func TestFixtures(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)

	const existing = `{"codigo_empresa":"000598","identificacion":"0999999999"}`
	const unknown = `{"codigo_empresa":"000598","identificacion":"0102030405"}`
	const create = `{"codigo_empresa":"000598","identificacion":"0102030405","nombre_cliente":"MARIA PEREZ","numero_telefono_1":"0991234567","operacion":0}`
	const updateBody = `{"codigo_empresa":"000598","identificacion":"0102030405","nombre_cliente":"MARIA PEREZ LOPEZ","codigo_cliente":"C-0102030405","operacion":1}`
	const rejected = `{"codigo_empresa":"000598","identificacion":"0102030406","nombre_cliente":"ERROR_API","operacion":0}`

	// Order matters: sync_updated updates what sync_created created.
	cases := []struct {
		name, file string
		path, body string
		fault      *erptest.Fault
		op         string
		wantStatus int
	}{
		{"lookup found", erptest.FixtureLookupFound + ".json", erp.DefaultLookupPath, existing, nil, "", 200},
		{"lookup not found", erptest.FixtureLookupNotFound + ".json", erp.DefaultLookupPath, unknown, nil, "", 200},
		{"lookup error_api", erptest.FixtureLookupErrorAPI + ".json", erp.DefaultLookupPath, unknown, ptr(erptest.ErrorAPI("consulta externa no disponible")), erp.OpLookupClient, 200},
		{"lookup http 500", erptest.FixtureLookupHTTP500 + ".json", erp.DefaultLookupPath, `{"codigo_empresa":"000598","identificacion":"0999999500"}`, nil, "", 500},
		{"sync created", erptest.FixtureSyncCreated + ".json", erp.DefaultClientsPath, create, nil, "", 200},
		{"sync updated", erptest.FixtureSyncUpdated + ".json", erp.DefaultClientsPath, updateBody, nil, "", 200},
		{"sync error_api", erptest.FixtureSyncErrorAPI + ".json", erp.DefaultClientsPath, rejected, nil, "", 200},
		{"sync http 500", erptest.FixtureSyncHTTP500 + ".json", erp.DefaultClientsPath, `{"codigo_empresa":"000598","identificacion":"0999999500","nombre_cliente":"X","operacion":0}`, nil, "", 500},
		{"undecodable", erptest.FixtureUndecodable + ".html", erp.DefaultLookupPath, unknown, ptr(erptest.Garbage()), erp.OpLookupClient, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fault != nil {
				srv.Script(tc.op, *tc.fault)
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+tc.path, bytes.NewBufferString(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.wantStatus, got)
			}
			path := filepath.Join("testdata", "fixtures", tc.file)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("fake answers\n%s\nfixture %s holds\n%s\n(run go test -run TestFixtures -update)", got, path, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
