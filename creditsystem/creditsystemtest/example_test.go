package creditsystemtest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

// A fake for one test, scripted to time out the next authorization.
func ExampleServer_Script() {
	srv := creditsystemtest.NewServer()
	defer srv.Close()
	cfg := srv.Config()
	cfg.Timeout = 100 * time.Millisecond // tests never wait for the 30 s default
	client, _ := creditsystem.New(cfg)

	srv.Script("GrabarAutorizacion", creditsystemtest.LateSuccess())
	_, err := client.GrabarAutorizacion(context.Background(), creditsystem.GrabarAutorizacionRequest{
		Identificacion: "0912345678", Plazo: 3, Monto: d("250.00"),
	})
	card, _ := srv.Card("0912345678")
	fmt.Println("timeout:", creditsystem.IsTimeout(err))
	fmt.Println("calls:", srv.Calls("GrabarAutorizacion"))
	fmt.Println("recorded anyway, available:", card.Disponible.StringFixed(2))
	// Output:
	// timeout: true
	// calls: 1
	// recorded anyway, available: 4750.00
}
