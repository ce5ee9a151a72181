package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/topup"
)

// The business series of the top-up service, beside the HTTP ones (internal/httpx), the
// carrier calls' (internal/metrics) and the e-mails' (topup/email). docs/operations.md lists
// them all with example alerts and what to do for each.

// scrapeTimeout bounds the database reads of one scrape.
const scrapeTimeout = 2 * time.Second

// rechargeMetrics counts the records' steps the store reports (topup.Observer): the statuses
// they reach and the reconciler giving up on them.
type rechargeMetrics struct {
	reached   *prometheus.CounterVec
	exhausted *prometheus.CounterVec
}

// reachable are the statuses a record of each source can reach: their series start at 0, so
// that a rate or an increase sees the first one.
var reachable = map[topup.Source][]topup.Status{
	topup.SourceDashboard:       {topup.StatusSuccess, topup.StatusFailed, topup.StatusUnavailable},
	topup.SourceWorkflowWebhook: {topup.StatusSuccess, topup.StatusFailed, topup.StatusUnavailable, topup.StatusRejected},
	topup.SourceWorkflowIgnored: {topup.StatusIgnored},
}

func newRechargeMetrics(reg prometheus.Registerer) *rechargeMetrics {
	m := &rechargeMetrics{
		reached: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "topup_recharges_total",
			Help: "Top-up records by the status they reached (success, failed, unavailable, rejected, ignored) and source, once per record and status: a record the reconciler recovers counts unavailable, then success; its retries do not count again.",
		}, []string{"source", "status"}),
		exhausted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "topup_recharges_retries_exhausted_total",
			Help: "Unavailable top-ups the reconciler gave up on (retries spent and the carrier does not have them), by source; each needs a person.",
		}, []string{"source"}),
	}
	reg.MustRegister(m.reached, m.exhausted)
	for src, statuses := range reachable {
		for _, st := range statuses {
			m.reached.WithLabelValues(string(src), string(st))
		}
		if src != topup.SourceWorkflowIgnored {
			m.exhausted.WithLabelValues(string(src))
		}
	}
	return m
}

func (m *rechargeMetrics) Reached(src topup.Source, st topup.Status) {
	m.reached.WithLabelValues(string(src), string(st)).Inc()
}

func (m *rechargeMetrics) RetriesExhausted(src topup.Source) {
	m.exhausted.WithLabelValues(string(src)).Inc()
}

// reconcileCollector reports, at each scrape, what waits for the reconciler and what it gave
// up on, from one grouped query (topup.Service.ReconcileBacklog).
type reconcileCollector struct{ svc *topup.Service }

var (
	reconcileWaiting = prometheus.NewDesc("topup_recharges_waiting",
		"Top-ups waiting for the reconciler: status pending (abandoned: untouched for RECARGAS_RECONCILE_PENDING_AFTER) or unavailable (retries left, or the carrier does not answer).",
		[]string{"status"}, nil)
	reconcileOldest = prometheus.NewDesc("topup_recharges_oldest_waiting_seconds",
		"Age (since creation) of the oldest top-up waiting for the reconciler; 0 when none waits.", nil, nil)
	reconcileExhausted = prometheus.NewDesc("topup_recharges_retries_exhausted",
		"Unavailable top-ups the reconciler gave up on (retries_exhausted_at set) and nobody has settled yet.", nil, nil)
)

func (c reconcileCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- reconcileWaiting
	ch <- reconcileOldest
	ch <- reconcileExhausted
}

func (c reconcileCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	b, age, err := c.svc.ReconcileBacklog(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(reconcileWaiting, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(reconcileWaiting, prometheus.GaugeValue, float64(b.Pending), string(topup.StatusPending))
	ch <- prometheus.MustNewConstMetric(reconcileWaiting, prometheus.GaugeValue, float64(b.Unavailable), string(topup.StatusUnavailable))
	ch <- prometheus.MustNewConstMetric(reconcileOldest, prometheus.GaugeValue, age.Seconds())
	ch <- prometheus.MustNewConstMetric(reconcileExhausted, prometheus.GaugeValue, float64(b.Exhausted))
}

// backlogCollector reports the notification jobs waiting and the age of the oldest, read from
// the queue at each scrape.
type backlogCollector struct{ q *jobs.Queue }

var (
	backlogWaiting = prometheus.NewDesc("topup_notifications_waiting",
		"Notification jobs not sent yet (available, scheduled, retryable or running).", nil, nil)
	backlogOldest = prometheus.NewDesc("topup_notifications_oldest_waiting_seconds",
		"Age of the oldest notification job not sent yet; 0 when none waits.", nil, nil)
)

func (c backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backlogWaiting
	ch <- backlogOldest
}

func (c backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	n, oldest, err := c.q.Backlog(ctx, topup.NotificationQueue)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(backlogWaiting, err)
		return
	}
	age := 0.0
	if !oldest.IsZero() {
		age = max(time.Since(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(backlogWaiting, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(backlogOldest, prometheus.GaugeValue, age)
}
