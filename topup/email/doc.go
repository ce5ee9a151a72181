// Package email sends the top-up notifications (the jobs of topup.NotificationQueue) as
// e-mail: [Sender] implements topup.Sender and is registered with
// topup.AddNotificationWorkers by the top-up service, or by `topup worker`.
//
//	s, err := email.New(email.Config{Host: "smtp.example.com", Port: 587, From: "recargas@example.com",
//		Username: user, Password: pass}, store, email.NewMetrics(reg))
//
// Each job is one e-mail, in Spanish, as plain text and HTML (templates/ embedded in the
// binary), to the notification's de-duplicated recipients: what the recipient needs to act
// (subscriber, product, amount, invoice, status, the carrier's message, the transaction id, what
// to do next), never a secret or raw XML. [Render] builds it.
//
// # Delivery
//
// One SMTP transaction per attempt (github.com/wneessen/go-mail's SMTP client): STARTTLS whenever
// the server offers it (port 465: TLS from the start), authentication when a username is set
// (never in clear to another host), a deadline (Config.Timeout, SMTP_TIMEOUT) on the connection
// and on every exchange. Each recipient's outcome is recorded in topup_notification_deliveries
// as the server answers:
//
//   - accepted (RCPT then DATA accepted): "sent"; a retry of the job, after a crash or a failure
//     for another recipient, never sends to it again. A crash between the server's acceptance
//     and the record is the one window where a recipient could get a second copy; it carries the
//     same Message-ID (the job's), so mail clients show it once.
//   - refused with a 5xx at RCPT, or the message refused with a 5xx at DATA: "rejected", never
//     tried again. When no recipient was reached, the job is cancelled (topup.ErrUndeliverable)
//     with the server's answer as its error.
//   - anything else (no connection, a 4xx, a timeout, authentication refused): nothing is
//     recorded, the job fails and River retries it with backoff (1 s, 16 s, 81 s, ... 25 times).
//
// GET /transactions/:id shows each job's state, attempts, last error and recipient outcomes.
//
// # Development
//
// Without SMTP_HOST nothing is sent: each e-mail is written once as an .eml file under
// Config.OutboxDir (./data/outbox in the service) and its path is logged.
package email
