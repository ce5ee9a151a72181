package email

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts the e-mails per notification kind; the queue's backlog is the service's (see
// services/topup).
type Metrics struct {
	sent, failed *prometheus.CounterVec
}

// NewMetrics registers topup_notifications_sent_total and topup_notifications_failed_total on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "topup_notifications_sent_total",
			Help: "Notification e-mails accepted by the mail server (or written to the outbox), per recipient and kind.",
		}, []string{"kind"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "topup_notifications_failed_total",
			Help: "Notification recipients refused for good by the mail server, per kind; never retried.",
		}, []string{"kind"}),
	}
	reg.MustRegister(m.sent, m.failed)
	return m
}

func (m *Metrics) observe(kind string, sent, failed int) {
	if m == nil {
		return
	}
	m.sent.WithLabelValues(kind).Add(float64(sent))
	m.failed.WithLabelValues(kind).Add(float64(failed))
}
