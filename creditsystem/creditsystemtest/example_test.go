package creditsystemtest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

// Teams that test with httpmock register the recorded answers on their own MockTransport.
func ExampleRegisterResponders() {
	cfg := creditsystemtest.DevConfig()
	cfg.CarteraURL = "https://creditsystem.example/Cartera/ServicioCar.svc"
	cfg.CentralURL = "https://creditsystem.example/Central/ServicioCentral.svc"

	for _, scenario := range []creditsystemtest.Scenario{creditsystemtest.ScenarioSuccess, creditsystemtest.ScenarioCardNotFound} {
		mt := httpmock.NewMockTransport()
		if err := creditsystemtest.RegisterResponders(mt, cfg, scenario); err != nil {
			log.Fatal(err)
		}
		client, err := creditsystem.New(cfg, creditsystem.WithHTTPClient(&http.Client{Transport: mt}))
		if err != nil {
			log.Fatal(err)
		}
		res, err := client.ConsultarTarjeta(context.Background(), creditsystem.ConsultarTarjetaRequest{Identificacion: "0912345678"})
		switch {
		case errors.Is(err, creditsystem.ErrCardNotFound):
			fmt.Println(scenario, "-> customer without card")
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Println(scenario, "->", *res.Cliente, res.Cupos[0].CupoDisponible.StringFixed(2))
		}
		fmt.Println("calls:", mt.GetCallCountInfo()["POST "+cfg.CarteraURL])
	}
	// Output:
	// success -> CLIENTE 0912345678 5000.00
	// calls: 1
	// card-not-found -> customer without card
	// calls: 1
}

// A fake for one test, scripted to time out the next authorization.
func ExampleServer_Script() {
	srv := creditsystemtest.NewServer()
	defer srv.Close()
	cfg := srv.Config()
	cfg.Timeout = 100 * time.Millisecond // tests never wait for the 30 s default
	client, _ := creditsystem.New(cfg)

	srv.Script("GrabarAutorizacion", creditsystemtest.LateSuccess())
	_, err := client.GrabarAutorizacion(context.Background(), creditsystem.GrabarAutorizacionRequest{
		Identificacion: "0912345678", Plazo: 3, Monto: decimalOf("250.00"),
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
