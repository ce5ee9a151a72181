package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/credit/payments"
	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/apidoc"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/idempotency"
	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/metrics"
)

// serviceName labels logs and metrics.
const serviceName = "credit"

// handOverWorkers is how many ERP hand-overs of payments one instance sends at a time.
const handOverWorkers = 2

// deps are what main (or a test) hands to newServer besides the configuration.
type deps struct {
	// DB is open and migrated (credit.Migrations); the caller closes it.
	DB *bun.DB
	// Health answers GET /up from a connection of its own (storage.OpenHealth); nil: DB.
	Health httpx.Pinger
	Logger *slog.Logger
}

// server is one running instance of the credit service.
type server struct {
	cfg      *config.Credit
	log      *slog.Logger
	app      *fiber.App
	clients  *clients.Service
	consumos *consumption.Service
	pagos    *payments.Service
	queue    *jobs.Queue
	keys     *idempotency.Store

	// Fakes started in development mode (nil otherwise); tests reach them to script outcomes.
	csFake  *creditsystemtest.Fake
	erpFake *erptest.Fake
	closers []func()
}

// newServer builds the upstream clients (the in-process fakes in development mode, for each
// upstream whose URL is not configured), the domain services and the Fiber app on d.DB.
func newServer(ctx context.Context, cfg *config.Credit, d deps) (_ *server, err error) {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &server{cfg: cfg, log: log}
	defer func() {
		if err != nil {
			s.close()
		}
	}()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	verifier, err := auth.NewVerifier(ctx, cfg.JWTJWKSURL, []byte(cfg.JWTSecret.Reveal()))
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	authn := auth.NewAuthenticator(verifier, auth.WithServiceKey(cfg.Creditsystem.ServiceKey.Reveal()))

	cs, err := s.newCreditsystem(reg)
	if err != nil {
		return nil, fmt.Errorf("creditsystem: %w", err)
	}
	erpClient, err := s.newERP(reg)
	if err != nil {
		return nil, fmt.Errorf("erp: %w", err)
	}

	// A sync claim outlives a live sync (ERP_TIMEOUT) so that only a dead one is taken over.
	s.clients, err = clients.NewService(clients.NewStore(d.DB), erpClient, clients.WithSyncLease(max(clients.DefaultSyncLease, 2*cfg.ERP.Timeout)))
	if err != nil {
		return nil, err
	}
	s.consumos, err = consumption.NewService(consumption.NewStore(d.DB), cs, consumption.WithLogger(log),
		consumption.WithCallTimeout(cfg.Creditsystem.Timeout), consumption.WithOTPKey(cfg.Creditsystem.OTPKey.Reveal()))
	if err != nil {
		return nil, err
	}
	// The ERP hand-overs of payments run in this process (queue HandOverQueue).
	workers := river.NewWorkers()
	s.queue, err = jobs.New(d.DB, workers, jobs.Config{Logger: log, Queues: map[string]int{payments.HandOverQueue: handOverWorkers}})
	if err != nil {
		return nil, err
	}
	s.pagos, err = payments.NewService(payments.NewStore(d.DB, s.queue), cs, payments.WithLogger(log),
		payments.WithCallTimeout(cfg.Creditsystem.Timeout), payments.WithERP(erpClient))
	if err != nil {
		return nil, err
	}
	if err := payments.AddHandOverWorker(workers, s.pagos); err != nil {
		return nil, err
	}
	reg.MustRegister(&pendingCollector{consumos: s.consumos, pagos: s.pagos})

	health := d.Health
	if health == nil {
		health = d.DB
	}
	s.app = httpx.New(httpx.Config{
		Service:        serviceName,
		Logger:         log,
		BodyLimit:      cfg.BodyLimit,
		Health:         health,
		ErrorMapper:    mapError,
		Registry:       reg,
		RequestTimeout: cfg.RequestTimeout,
		Pprof:          cfg.DebugPprof,
		CORSOrigins:    cfg.CORSAllowedOrigins,
	})
	s.keys = idempotency.NewStore(d.DB, idempotencyTable)
	routes(s.app, authn, s.keys, &clientHandlers{svc: s.clients}, &consumoHandlers{svc: s.consumos}, &pagoHandlers{svc: s.pagos})
	doc, err := openapiDoc()
	if err != nil {
		return nil, err
	}
	apidoc.Mount(s.app, doc)
	return s, nil
}

// newCreditsystem builds the creditsystem client: against CREDITSYSTEM_*_URL, or in development
// mode against an in-process creditsystemtest fake through its Transport (no socket: the SOAP
// is encoded and decoded as on the network, without a loopback connection's cost).
func (s *server) newCreditsystem(reg prometheus.Registerer) (*creditsystem.Client, error) {
	c := s.cfg.Creditsystem
	csCfg := creditsystem.Config{
		CarteraURL:    c.CarteraURL,
		CentralURL:    c.CentralURL,
		SOAPNamespace: c.SOAPNamespace,
		Usuario:       c.Usuario,
		CodigoEmpresa: c.CodigoEmpresa,
		Terminal:      c.Terminal,
		Timeout:       c.Timeout,
		OTPBypass:     c.OTPBypass.Reveal(),
	}
	if s.cfg.CreditsystemFake() {
		// The fake forgets its authorizations at every start while ./data keeps them: number from
		// the start time in microseconds so a restarted development service never repeats an
		// autorizacion_id (in seconds, a load test of a few thousand authorizations collided
		// with the next start's numbers).
		// Fixed credit lines: every non-magic card shows 5000.00 available however many
		// authorizations a client or test suite makes on it (DESIGN.md, Fakes and magic values).
		s.csFake = creditsystemtest.NewFake(
			creditsystemtest.WithFirstAuthorization(int(time.Now().UnixMicro())),
			creditsystemtest.WithFixedCreditLines(),
		)
		s.closers = append(s.closers, s.csFake.Close)
		csCfg.CarteraURL = creditsystemtest.MockURL + creditsystemtest.CarteraPath
		csCfg.CentralURL = creditsystemtest.MockURL + creditsystemtest.CentralPath
		csCfg.SOAPNamespace = s.csFake.Namespace()
		if csCfg.OTPBypass == "" {
			csCfg.OTPBypass = creditsystemtest.DevOTPBypass
		}
		return creditsystem.New(csCfg, creditsystem.WithHTTPClient(fakeClient(reg, "creditsystem", creditsystem.OperationFromContext, s.csFake.Transport())))
	}
	return creditsystem.New(csCfg, creditsystem.WithHTTPClient(upstreamClient(reg, "creditsystem", creditsystem.OperationFromContext)))
}

// newERP builds the ERP client: against ERP_URL, or in development mode against an in-process
// erptest fake through its Transport.
func (s *server) newERP(reg prometheus.Registerer) (*erp.Client, error) {
	e := s.cfg.ERP
	erpCfg := erp.Config{
		BaseURL:      e.URL,
		Timeout:      e.Timeout,
		LookupPath:   e.LookupPath,
		ClientsPath:  e.ClientsPath,
		PaymentsPath: e.PaymentsPath,
		APIKey:       e.APIKey.Reveal(),
		APIKeyHeader: e.APIKeyHeader,
	}
	if s.cfg.ERPFake() {
		s.erpFake = erptest.NewFake()
		s.closers = append(s.closers, s.erpFake.Close)
		// The fake serves the default paths only.
		erpCfg.BaseURL, erpCfg.LookupPath, erpCfg.ClientsPath, erpCfg.PaymentsPath = erptest.MockURL, erp.DefaultLookupPath, erp.DefaultClientsPath, erp.DefaultPaymentsPath
		return erp.New(erpCfg, erp.WithHTTPClient(fakeClient(reg, "erp", erp.OperationFromContext, s.erpFake.Transport())))
	}
	return erp.New(erpCfg, erp.WithHTTPClient(upstreamClient(reg, "erp", erp.OperationFromContext)))
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

// fakeClient is the HTTP client of an upstream's in-process fake, recorded like upstreamClient.
func fakeClient(reg prometheus.Registerer, upstream string, op func(context.Context) (string, bool), fake http.RoundTripper) *http.Client {
	return &http.Client{Transport: metrics.Transport(fake, upstream, metrics.OperationFrom(op), reg)}
}

// serve answers HTTP on ln, reverses the authorizations granted but not recorded every
// CREDIT_RECONCILE_INTERVAL and deletes the expired Idempotency-Keys every hour, until ctx ends
// (main's ctx ends on SIGTERM or SIGINT); then it stops gracefully, letting in-flight requests
// finish.
func (s *server) serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if every := s.cfg.Creditsystem.ReconcileInterval; every > 0 {
		wg.Go(func() { s.consumos.Run(ctx, every) })
	}
	if err := s.queue.Start(ctx); err != nil {
		return err
	}
	wg.Go(func() { s.keys.Run(ctx, idempotency.PurgeInterval, s.log) })
	err := httpx.ServeListener(ctx, s.app, ln, httpx.DefaultShutdownGrace, s.log)
	cancel()
	wg.Wait()
	stopCtx, stop := context.WithTimeout(context.Background(), httpx.DefaultShutdownGrace)
	defer stop()
	return errors.Join(err, s.queue.Stop(stopCtx))
}

// pendingCollector reports, at each scrape, what needs attention: credit records held by an
// operation whose outcome is unknown, authorizations granted but not recorded (or reversed),
// payments whose outcome is unknown and ERP hand-overs that fail.
type pendingCollector struct {
	consumos *consumption.Service
	pagos    *payments.Service
}

var (
	descOutcomeUnknown = prometheus.NewDesc("credit_consumos_outcome_unknown",
		"Consumption records held by an operation whose outcome is unknown (a timeout, or a process that died during the call); an operator reconciles them.", nil, nil)
	descUnrecorded = prometheus.NewDesc("credit_authorizations_unrecorded",
		"Authorizations the creditsystem granted that are neither recorded nor reversed yet (reversing, refused or unknown reversal, or a call that never ended).", nil, nil)
	descPagosUnknown = prometheus.NewDesc("credit_pagos_outcome_unknown",
		"Payments or payment reversals whose outcome is unknown (a timeout, or a process that died during the call); a debt query of the card settles them.", nil, nil)
	descHandOvers = prometheus.NewDesc("credit_payment_handovers_failing",
		"ERP hand-overs of payments that failed their last attempt (retried with backoff) or were given up (a person finishes them).", nil, nil)
)

func (p *pendingCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descOutcomeUnknown
	ch <- descUnrecorded
	ch <- descPagosUnknown
	ch <- descHandOvers
}

func (p *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	held, unrecorded, err := p.consumos.Pendientes(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descOutcomeUnknown, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(descOutcomeUnknown, prometheus.GaugeValue, float64(held))
	ch <- prometheus.MustNewConstMetric(descUnrecorded, prometheus.GaugeValue, float64(unrecorded))
	unknown, handOvers, err := p.pagos.Pendientes(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descPagosUnknown, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(descPagosUnknown, prometheus.GaugeValue, float64(unknown))
	ch <- prometheus.MustNewConstMetric(descHandOvers, prometheus.GaugeValue, float64(handOvers))
}

// logStart says how the instance runs, development fakes first, then where it listens (after
// the bind).
func (s *server) logStart(addr net.Addr) {
	s.log.Info("starting", "config", s.cfg)
	if s.csFake != nil {
		s.log.Warn("development: the creditsystem is the built-in fake (creditsystemtest), in process, no network; magic amounts in the README")
	}
	if s.erpFake != nil {
		s.log.Warn("development: the ERP is the built-in fake (erptest), in process, no network")
	}
	token := ""
	if s.cfg.Development() {
		// Commands and variable names only: no key, not even a development default, is logged.
		token = `Authorization: Bearer $(go run ./services/devtoken); clients also take "ServiceKey $CREDITSYSTEM_SERVICE_KEY"`
	}
	httpx.LogListening(s.log, addr, apiPrefix, token)
}

// close stops the development fakes.
func (s *server) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}
