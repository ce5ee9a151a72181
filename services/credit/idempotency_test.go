package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/internal/idempotency"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// Every money-moving POST of the consumption module takes an Idempotency-Key: the same key and
// body replay the answer and call nothing; another body is 422.
func TestConsumoIdempotencyKey(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		post := func(endpoint, key string, body any) response {
			return env.do(http.MethodPost, consumoPrefix+endpoint, body, env.userToken(), idempotency.Header, key)
		}
		first := post("autorizacion", "aut-1", autorizacionBody("300.00"))
		if first.Status != http.StatusOK {
			t.Fatalf("autorizacion = %d %s", first.Status, first.Body)
		}
		again := post("autorizacion", "aut-1", autorizacionBody("300.00"))
		if !bytes.Equal(again.Body, first.Body) || again.Header.Get(idempotency.ReplayedHeader) != "true" {
			t.Fatalf("retry answered %s, want the first answer %s replayed", again.Body, first.Body)
		}
		if n := env.cs.Calls("GrabarAutorizacion"); n != 1 {
			t.Fatalf("GrabarAutorizacion reached the creditsystem %d times, want 1", n)
		}
		expectError(t, post("autorizacion", "aut-1", autorizacionBody("301.00")), http.StatusUnprocessableEntity)

		var aut struct {
			ID string `json:"autorizacion_id"`
		}
		_ = json.Unmarshal(first.Body, &aut)
		for _, step := range []struct {
			endpoint, upstream string
			body               any
		}{
			{"confirmar", "GrabarConsumo", confirmarBody(aut.ID, "F-IDEM-1")},
			{"reverso-consumo", "GrabarReversoConsumo", map[string]any{"autorizacion_id": aut.ID}},
		} {
			first := post(step.endpoint, step.endpoint+"-1", step.body)
			if first.Status != http.StatusOK {
				t.Fatalf("%s = %d %s", step.endpoint, first.Status, first.Body)
			}
			again := post(step.endpoint, step.endpoint+"-1", step.body)
			if !bytes.Equal(again.Body, first.Body) || again.Header.Get(idempotency.ReplayedHeader) != "true" {
				t.Fatalf("%s retry answered %d %s, want a replay", step.endpoint, again.Status, again.Body)
			}
			if n := env.cs.Calls(step.upstream); n != 1 {
				t.Fatalf("%s reached the creditsystem %d times, want 1", step.upstream, n)
			}
		}
	})
}

// 20 concurrent confirmations with one key: exactly one GrabarConsumo; the other answers are
// replays or 409.
func TestConsumoIdempotencyKeyConcurrent(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		id := env.autorizar()
		env.cs.Script("GrabarConsumo", creditsystemtest.Process().After(300*time.Millisecond))
		body, _ := json.Marshal(confirmarBody(id, "F-IDEM-C"))
		token := env.userToken()
		const n = 20
		status := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(http.MethodPost, env.URL+consumoPrefix+"confirmar", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", token)
				req.Header.Set(idempotency.Header, "confirmar-c")
				resp, err := env.client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status[i] = resp.StatusCode
			}()
		}
		wg.Wait()
		for i, s := range status {
			if s != http.StatusOK && s != http.StatusConflict {
				t.Fatalf("request %d answered %d", i, s)
			}
		}
		if calls := env.cs.Calls("GrabarConsumo"); calls != 1 {
			t.Fatalf("GrabarConsumo reached the creditsystem %d times, want 1", calls)
		}
	})
}
