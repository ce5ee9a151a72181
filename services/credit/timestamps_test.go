package main

import (
	"net/http"
	"testing"

	"github.com/platform/integrations/internal/apidoc/apitest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestAnswerTimestamps: every timestamp of the credit answers (client, consumption record and
// its attempts, payment) has the one layout of both services: RFC 3339, UTC, milliseconds.
func TestAnswerTimestamps(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		found := map[string]any{}
		r := env.do("POST", clientsPath, newClientBody("0102030499"), env.userToken())
		apitest.Timestamps(clientAnswer(t, r, http.StatusCreated), "client", found)
		env.withDebt()
		id := env.autorizar()
		apitest.Timestamps(consumoExpect(t, env.do(http.MethodGet, consumoPrefix+id, nil, env.userToken()), http.StatusOK), "consumo", found)
		apitest.Timestamps(env.pagos("aplicar", aplicarBody("100.00")).JSON(t), "pago", found)
		apitest.CheckTimestamps(t, found, "client.client.created_at", "client.client.updated_at", "consumo.created_at",
			"consumo.intentos[0].iniciado_at", "consumo.intentos[0].terminado_at", "pago.createdAt", "pago.aplicadoAt")
	})
}
