package arch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/platform/integrations"

type pkg struct {
	ImportPath string
	Dir        string
	Imports    []string
	GoFiles    []string
}

// packages lists every package of the module (test files excluded).
func packages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var list []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		list = append(list, p)
	}
	return list
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func under(path string, roots ...string) bool {
	r := rel(path)
	for _, root := range roots {
		if r == root || strings.HasPrefix(r, root+"/") {
			return true
		}
	}
	return false
}

// isFake reports whether path is an SDK's fake (creditsystemtest, carriertest, erptest).
func isFake(path string) bool {
	sdk, pkg, ok := strings.Cut(rel(path), "/")
	return ok && pkg == sdk+"test"
}

// TestImportRules: what may import what (docs/architecture.md).
func TestImportRules(t *testing.T) {
	sdks := []string{"creditsystem", "carrier", "erp", "upstream"}
	domain := []string{"credit", "topup"}
	for _, p := range packages(t) {
		for _, imp := range p.Imports {
			switch {
			case under(imp, "services"):
				t.Errorf("%s imports %s: nothing imports a service", rel(p.ImportPath), rel(imp))
			case under(p.ImportPath, sdks...) && (strings.HasPrefix(imp, "github.com/gofiber/") || strings.HasPrefix(imp, "github.com/uptrace/bun")):
				t.Errorf("SDK package %s imports %s", rel(p.ImportPath), imp)
			case under(p.ImportPath, sdks...) && strings.HasPrefix(imp, module+"/") && !under(imp, sdks...) &&
				!strings.Contains(rel(imp), "/internal/") && rel(imp) != "internal/sdkerr" &&
				!(isFake(p.ImportPath) && rel(imp) == "internal/fakehttp"):
				t.Errorf("SDK package %s imports %s: SDKs import only SDKs and internal/sdkerr (fakes also internal/fakehttp)", rel(p.ImportPath), rel(imp))
			case under(p.ImportPath, domain...) && (strings.HasPrefix(imp, "github.com/gofiber/") || under(imp, "internal/httpx", "internal/auth")):
				t.Errorf("domain package %s imports %s: the domain knows no HTTP", rel(p.ImportPath), imp)
			case under(p.ImportPath, "credit/clients") && under(imp, "credit/consumption"),
				under(p.ImportPath, "credit/consumption") && under(imp, "credit/clients"):
				t.Errorf("aggregate %s imports aggregate %s", rel(p.ImportPath), rel(imp))
			}
		}
	}
}

// TestServicesDoNotLinkHTTPMock: httpmock stays in the fakes' fixtures packages, which only tests
// import.
func TestServicesDoNotLinkHTTPMock(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", module+"/services/...")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if bytes.Contains(out, []byte("jarcoal/httpmock")) {
		t.Fatal("a service binary links github.com/jarcoal/httpmock")
	}
}

// TestOnlyStoresHoldTransactions: in the domain packages, transactions and raw database handles
// appear only in store.go and migrations.go.
func TestOnlyStoresHoldTransactions(t *testing.T) {
	for _, p := range packages(t) {
		if !under(p.ImportPath, "credit", "topup") {
			continue
		}
		for _, f := range p.GoFiles {
			if f == "store.go" || f == "migrations.go" {
				continue
			}
			file, err := os.Open(filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(file)
			for n := 1; sc.Scan(); n++ {
				line := sc.Text()
				for _, word := range []string{"RunInTx", "bun.Tx", "bun.IDB", "BeginTx"} {
					if strings.Contains(line, word) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
						t.Errorf("%s/%s:%d uses %s outside the store", rel(p.ImportPath), f, n, word)
					}
				}
			}
			file.Close()
		}
	}
}
