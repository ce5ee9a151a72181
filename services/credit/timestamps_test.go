package main

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/platform/integrations/internal/storage/storagetest"
)

// answerTimestamp is the one layout of the services' timestamps (httpx.TimeLayout): RFC 3339
// in UTC with milliseconds.
var answerTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// timestamps walks a decoded JSON answer and collects, by path, every member that is not null
// and is named like a timestamp: "..._at" (clients, consumption) or "...At" (payments).
func timestamps(v any, path string, out map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			if (strings.HasSuffix(k, "_at") || strings.HasSuffix(k, "At")) && m != nil {
				out[path+"."+k] = m
			}
			timestamps(m, path+"."+k, out)
		}
	case []any:
		for i, m := range v {
			timestamps(m, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

// TestAnswerTimestamps: every timestamp of the credit answers (client, consumption record and
// its attempts, payment) has the one layout of both services: RFC 3339, UTC, milliseconds.
func TestAnswerTimestamps(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		found := map[string]any{}
		r := env.do("POST", clientsPath, newClientBody("0102030499"), env.userToken())
		timestamps(clientAnswer(t, r, http.StatusCreated), "client", found)
		env.withDebt()
		id := env.autorizar()
		timestamps(consumoExpect(t, env.do(http.MethodGet, consumoPrefix+id, nil, env.userToken()), http.StatusOK), "consumo", found)
		timestamps(env.pagos("aplicar", aplicarBody("100.00")).JSON(t), "pago", found)
		for _, want := range []string{"client.client.created_at", "client.client.updated_at", "consumo.created_at",
			"consumo.intentos[0].iniciado_at", "consumo.intentos[0].terminado_at", "pago.createdAt", "pago.aplicadoAt"} {
			if _, ok := found[want]; !ok {
				t.Errorf("no %s in the answers; found %v", want, found)
			}
		}
		for path, v := range found {
			if s, ok := v.(string); !ok || !answerTimestamp.MatchString(s) {
				t.Errorf("%s = %v, want RFC 3339 UTC with milliseconds (2026-11-27T15:04:05.123Z)", path, v)
			}
		}
	})
}
