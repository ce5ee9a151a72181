package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/apidoc"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/idempotency"
	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/metrics"
	"github.com/platform/integrations/topup"
	"github.com/platform/integrations/topup/email"
)

// serviceName labels logs and metrics.
const serviceName = "topup"

// notificationWorkers is how many notification jobs one process sends at once.
const notificationWorkers = 5

// DefaultOutboxDir is where development writes the e-mails when SMTP_HOST is unset, next to the
// embedded database (./data).
const DefaultOutboxDir = "data/outbox"

// deps are what run (or a test) hands to newServer besides the configuration.
type deps struct {
	// DB is the open, migrated database; run opens and closes it.
	DB *bun.DB
	// Health answers GET /up from a connection of its own (storage.OpenHealth); nil: DB.
	Health httpx.Pinger
	Logger *slog.Logger
	// Sender, when set, replaces the e-mail sender built from the configuration (SMTP_*, or the
	// .eml outbox in development) that works the recharge-notifications queue.
	Sender topup.Sender
	// OutboxDir receives the development e-mails without SMTP_HOST; "" means DefaultOutboxDir.
	OutboxDir string
	// ServiceOptions are passed to topup.NewService (tests: a clock).
	ServiceOptions []topup.Option
}

// server is one running instance of the top-up service.
type server struct {
	cfg       *config.Topup
	log       *slog.Logger
	queue     *jobs.Queue
	service   *topup.Service
	app       *fiber.App
	fake      *carriertest.Fake // the in-process SPR in mock mode, nil otherwise
	reconcile bool
	outbox    string // where development e-mails go ("" with SMTP_HOST or an injected sender)
	keys      *idempotency.Store
}

// newServer builds, on the open database, the product mapping and reconciler settings, the
// carrier client (the in-process fake in mock mode), the job queue, the domain service and the
// Fiber app.
func newServer(ctx context.Context, cfg *config.Topup, d deps) (_ *server, err error) {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	st, err := loadSettings(cfg.Recargas)
	// A reconciler pass may wait for a query and a top-up: its claim outlives both.
	st.Reconcile.Lease = 2*cfg.Carrier.Timeout + 10*time.Second
	if err != nil {
		return nil, err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	spr, fake, err := newCarrier(cfg, st.Products, reg, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil && fake != nil {
			fake.Close()
		}
	}()

	sender, outbox := d.Sender, ""
	if sender == nil {
		if cfg.SMTP.Host == "" {
			outbox = cmp.Or(d.OutboxDir, DefaultOutboxDir)
		}
		if sender, err = newSender(cfg, d.DB, outbox, reg, log); err != nil {
			return nil, err
		}
	}
	queue, err := notificationQueue(d.DB, sender, log)
	if err != nil {
		return nil, err
	}
	reg.MustRegister(backlogCollector{queue})

	svcOpts := append([]topup.Option{topup.WithLogger(log)}, d.ServiceOptions...)
	recharges := newRechargeMetrics(reg)
	svc, err := topup.NewService(topup.NewStore(d.DB, queue, topup.WithObserver(recharges)), spr, topup.Config{
		DailyLimit:      cfg.Recargas.DailyLimit,
		DefaultCanton:   cfg.Recargas.DefaultCanton,
		OperationsEmail: cfg.OperationsEmail,
		Products:        st.Products,
		Reconcile:       st.Reconcile,
	}, svcOpts...)
	if err != nil {
		return nil, err
	}
	reg.MustRegister(reconcileCollector{svc})

	verifier, err := auth.NewVerifier(ctx, cfg.JWTJWKSURL, []byte(cfg.JWTSecret.Reveal()))
	if err != nil {
		return nil, err
	}
	actionTokens, err := auth.NewActionTokens([]byte(cfg.ActionTokenSecret.Reveal()))
	if err != nil {
		return nil, err
	}
	authn := auth.NewAuthenticator(verifier, auth.WithHeaderKey(cfg.ServiceKey.Reveal()))

	health := d.Health
	if health == nil {
		health = d.DB
	}
	app := httpx.New(httpx.Config{
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
	keys := idempotency.NewStore(d.DB, idempotencyTable)
	routes(app, &handlers{svc: svc}, authn, actionTokens, keys)
	doc, err := openapiDoc()
	if err != nil {
		return nil, err
	}
	apidoc.Mount(app, doc)

	return &server{
		cfg: cfg, log: log, queue: queue, service: svc, app: app, fake: fake, keys: keys,
		reconcile: !st.ReconcileDisabled, outbox: outbox,
	}, nil
}

// newSender builds the e-mail sender: SMTP_* when SMTP_HOST is set, else the .eml files under
// outbox.
func newSender(cfg *config.Topup, db *bun.DB, outbox string, reg prometheus.Registerer, log *slog.Logger) (*email.Sender, error) {
	// The sender reads and writes only the delivery records, which need no job queue.
	return email.New(email.Config{
		Host: cfg.SMTP.Host, Port: cfg.SMTP.Port, Username: cfg.SMTP.Username, Password: cfg.SMTP.Password.Reveal(),
		From: cfg.SMTP.FromAddress(), Timeout: cfg.SMTP.Timeout, OutboxDir: outbox, Logger: log,
	}, topup.NewStore(db, nil), email.NewMetrics(reg))
}

// notificationQueue is the job queue of db, working recharge-notifications with sender.
func notificationQueue(db *bun.DB, sender topup.Sender, log *slog.Logger) (*jobs.Queue, error) {
	workers := river.NewWorkers()
	if err := topup.AddNotificationWorkers(workers, sender); err != nil {
		return nil, err
	}
	return jobs.New(db, workers, jobs.Config{Logger: log, Queues: map[string]int{topup.NotificationQueue: notificationWorkers}})
}

// newCarrier builds the SPR client: against CARRIER_SPR_URL, or in mock mode against an
// in-process carriertest fake (no network; the magic subscribers answer their outcomes; the
// offers it knows are its default inventory and those of the product mapping, any other is
// refused as the carrier would). Both go through the metrics RoundTripper.
func newCarrier(cfg *config.Topup, products *topup.Products, reg prometheus.Registerer, log *slog.Logger) (*carrier.Client, *carriertest.Fake, error) {
	c := cfg.Carrier
	ccfg := carrier.Config{
		URL:       c.SPRURL,
		User:      c.User,
		Password:  c.Password.Reveal(),
		CompanyID: c.CompanyID,
		Timeout:   c.Timeout,
	}
	if c.OAuthEnabled() {
		ccfg.OAuth2 = &carrier.OAuth2Config{TokenURL: c.OAuthTokenURL, ClientID: c.OAuthClientID, ClientSecret: c.OAuthClientSecret.Reveal()}
	}
	op := metrics.OperationFrom(carrier.OperationFromContext)
	if c.MockMode {
		var fopts []carriertest.Option
		if ccfg.User != "" || ccfg.Password != "" || ccfg.CompanyID != "" {
			fopts = append(fopts, carriertest.WithCredentials(ccfg.User, ccfg.Password, ccfg.CompanyID))
		}
		if ccfg.OAuth2 != nil {
			ccfg.OAuth2.TokenURL = "http://carrier-spr.mock" + carriertest.TokenPath
			fopts = append(fopts, carriertest.WithOAuth2(ccfg.OAuth2.ClientID, ccfg.OAuth2.ClientSecret, time.Hour))
		}
		ccfg.URL = carriertest.MockURL
		fake := carriertest.NewFake(fopts...)
		for _, p := range products.All() {
			if _, ok := fake.Stock(p.OfferID); !ok {
				fake.SetStock(p.OfferID, cmp.Or(p.Description, p.ProductCode), mockStock)
			}
		}
		hc := &http.Client{Transport: metrics.Transport(fake.Transport(), "carrier", op, reg)}
		client, err := carrier.New(ccfg, carrier.WithHTTPClient(hc), carrier.WithLogger(log))
		if err != nil {
			fake.Close()
			return nil, nil, err
		}
		return client, fake, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	hc := &http.Client{
		Transport: metrics.Transport(tr, "carrier", op, reg),
		// A redirected money-moving POST is a misconfiguration to surface, not to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	client, err := carrier.New(ccfg, carrier.WithHTTPClient(hc), carrier.WithLogger(log))
	return client, nil, err
}

// mockStock is the stock mock mode gives a mapped offer that is not in the fake's default
// inventory (whose offers have as many).
const mockStock = 1000

// serve answers HTTP on ln and runs the reconciler (or, without one, the hourly purge of the
// action-token uses and throttle hits), the notification workers and the hourly purge of
// expired Idempotency-Keys until ctx ends or SIGTERM/SIGINT, then stops them and the server
// gracefully, letting in-flight requests and e-mails finish (httpx.DefaultShutdownGrace).
func (s *server) serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	if s.reconcile {
		wg.Go(func() { s.service.Run(ctx) })
	} else {
		wg.Go(func() { s.purge(ctx, purgeInterval) })
	}
	wg.Go(func() { s.keys.Run(ctx, idempotency.PurgeInterval, s.log) })
	var started atomic.Bool
	wg.Go(func() { started.Store(s.startQueue(ctx)) })
	err := httpx.ServeListener(ctx, s.app, ln, httpx.DefaultShutdownGrace, s.log)
	cancel()
	wg.Wait()
	if started.Load() {
		stopCtx, stop := context.WithTimeout(context.Background(), httpx.DefaultShutdownGrace)
		defer stop()
		err = errors.Join(err, s.queue.Stop(stopCtx))
	}
	return err
}

// purgeInterval is how often a process without a reconciler purges the action-token uses and
// throttle hits (the reconciler does it at every pass).
const purgeInterval = time.Hour

// purge runs topup.Service.Purge at once and then every interval until ctx ends.
func (s *server) purge(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := s.service.Purge(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "action tokens and throttle hits not purged; trying again later", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// startQueue starts the notification workers, trying again every few seconds while the
// database refuses (a lock held at start-up must not keep the API down): it reports whether
// they started before ctx ended. The jobs wait meanwhile, visible in
// topup_notifications_waiting.
func (s *server) startQueue(ctx context.Context) bool {
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		err := s.queue.Start(ctx)
		if err == nil {
			return true
		}
		s.log.ErrorContext(ctx, "notification workers did not start; trying again", "error", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
}

// close stops the in-process SPR of mock mode. The database is run's to close.
func (s *server) close() {
	if s.fake != nil {
		s.fake.Close()
	}
}

// logStart says how the instance runs, development fakes first, then where it listens (after
// the bind).
func (s *server) logStart(addr net.Addr) {
	defer func() {
		token := ""
		if s.cfg.Development() {
			// Commands and variable names only: no key, not even a development default, is logged.
			token = "Authorization: Bearer $(go run ./services/devtoken -sub u-1 -permissions create_recargas,view_recargas); " +
				"X-Action-Token: $(go run ./services/devtoken -action -sub u-1); x-service-key: $TOPUP_SERVICE_KEY"
		}
		httpx.LogListening(s.log, addr, Prefix, token)
	}()
	s.log.Info("starting", "config", s.cfg)
	for _, f := range s.cfg.Fakes() {
		switch f {
		case config.UpstreamCarrier:
			s.log.Warn("CARRIER_MOCK_MODE: the carrier SPR is the built-in fake (carriertest), no network; magic subscribers 593990000001 failed, 593990000002 fault 350, 593990000003 timeout, 593990000004 late success")
		case config.UpstreamSMTP:
			s.log.Warn("development: no SMTP_HOST; notification e-mails are written as .eml files to the outbox", "dir", s.outbox)
		default:
			s.log.Warn("development: an upstream is a built-in fake", "upstream", f)
		}
	}
}
