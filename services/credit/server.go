package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/metrics"
)

// apiPrefix is the prefix of the implemented endpoints (credit-service.md, Versioning).
const apiPrefix = "/api/v1/credigestion"

// server holds what the route groups need. Each module registers its routes from its own file
// (clients.go, consumo.go) and builds its domain service from these dependencies.
type server struct {
	cfg   *config.Credit
	db    *bun.DB
	log   *slog.Logger
	authn *auth.Authenticator
	cs    *creditsystem.Client
	erp   *erp.Client
	app   *fiber.App

	// Fakes started in development mode (nil otherwise); tests reach them to script outcomes.
	csFake  *creditsystemtest.Server
	erpFake *erptest.Server
	closers []func()
}

// newServer wires the service on an open, migrated database. In development mode an upstream
// whose URL is not configured runs against its in-process fake on a loopback port.
func newServer(ctx context.Context, cfg *config.Credit, db *bun.DB, log *slog.Logger) (*server, error) {
	s := &server{cfg: cfg, db: db, log: log}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	verifier, err := auth.NewVerifier(ctx, cfg.JWTJWKSURL, []byte(cfg.JWTSecret.Reveal()))
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	s.authn = auth.NewAuthenticator(verifier, auth.WithServiceKey(cfg.Creditsystem.ServiceKey.Reveal()))

	csCfg := creditsystem.Config{
		CarteraURL:    cfg.Creditsystem.CarteraURL,
		CentralURL:    cfg.Creditsystem.CentralURL,
		SOAPNamespace: cfg.Creditsystem.SOAPNamespace,
		Usuario:       cfg.Creditsystem.Usuario,
		CodigoEmpresa: cfg.Creditsystem.CodigoEmpresa,
		Terminal:      cfg.Creditsystem.Terminal,
		Timeout:       cfg.Creditsystem.Timeout,
		OTPBypass:     cfg.Creditsystem.OTPBypass.Reveal(),
	}
	if cfg.CreditsystemFake() {
		// The fake forgets its authorizations at every start while ./data keeps them: number from
		// the start time so a restarted development service never repeats an autorizacion_id.
		// Fixed credit lines: every non-magic card shows 5000.00 available however many
		// authorizations a client or test suite makes on it (DESIGN.md, Fakes and magic values).
		s.csFake = creditsystemtest.NewServer(
			creditsystemtest.WithFirstAuthorization(int(time.Now().Unix())),
			creditsystemtest.WithFixedCreditLines(),
		)
		s.closers = append(s.closers, s.csFake.Close)
		csCfg.CarteraURL, csCfg.CentralURL = s.csFake.CarteraURL, s.csFake.CentralURL
		csCfg.SOAPNamespace = s.csFake.Namespace()
		if csCfg.OTPBypass == "" {
			csCfg.OTPBypass = creditsystemtest.DevOTPBypass
		}
		log.Warn("development mode: creditsystem runs against the built-in fake", "url", s.csFake.URL)
	}
	s.cs, err = creditsystem.New(csCfg, creditsystem.WithHTTPClient(upstreamClient(reg, "creditsystem", creditsystem.OperationFromContext)))
	if err != nil {
		return nil, fmt.Errorf("creditsystem: %w", err)
	}

	erpCfg := erp.Config{
		BaseURL:      cfg.ERP.URL,
		Timeout:      cfg.ERP.Timeout,
		LookupPath:   cfg.ERP.LookupPath,
		ClientsPath:  cfg.ERP.ClientsPath,
		APIKey:       cfg.ERP.APIKey.Reveal(),
		APIKeyHeader: cfg.ERP.APIKeyHeader,
	}
	if cfg.ERPFake() {
		s.erpFake = erptest.NewServer()
		s.closers = append(s.closers, s.erpFake.Close)
		// The fake serves the default paths only.
		erpCfg.BaseURL, erpCfg.LookupPath, erpCfg.ClientsPath = s.erpFake.URL, erp.DefaultLookupPath, erp.DefaultClientsPath
		log.Warn("development mode: erp runs against the built-in fake", "url", s.erpFake.URL)
	}
	s.erp, err = erp.New(erpCfg, erp.WithHTTPClient(upstreamClient(reg, "erp", erp.OperationFromContext)))
	if err != nil {
		return nil, fmt.Errorf("erp: %w", err)
	}

	s.app = httpx.New(httpx.Config{
		Service:     "credit",
		Logger:      log,
		BodyLimit:   cfg.BodyLimit,
		Health:      db,
		ErrorMapper: mapError,
		Registry:    reg,
	})
	s.registerRoutes(s.app.Group(apiPrefix))
	ok = true
	return s, nil
}

// Close stops the development fakes.
func (s *server) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// upstreamClient is the HTTP client of one upstream: pooled keep-alive connections, latency and
// outcome recorded per operation. Deadlines come from each SDK's configured timeout.
func upstreamClient(reg prometheus.Registerer, upstream string, op func(context.Context) (string, bool)) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConns = 100
	base.MaxIdleConnsPerHost = 32
	base.IdleConnTimeout = 90 * time.Second
	return &http.Client{Transport: metrics.Transport(base, upstream, metrics.OperationFrom(op), reg)}
}
