package email

import (
	"bytes"
	"embed"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/platform/integrations/topup"
)

//go:embed templates/*.tmpl
var templateFiles embed.FS

var (
	textBody = texttemplate.Must(texttemplate.ParseFS(templateFiles, "templates/body.txt.tmpl"))
	htmlBody = htmltemplate.Must(htmltemplate.ParseFS(templateFiles, "templates/body.html.tmpl"))
)

// guayaquil is the time zone of the dates in the e-mails (Ecuador has no daylight saving).
var guayaquil = func() *time.Location {
	if loc, err := time.LoadLocation("America/Guayaquil"); err == nil {
		return loc
	}
	return time.FixedZone("ECT", -5*60*60)
}()

// Message is a rendered notification.
type Message struct {
	Subject string
	Text    string
	HTML    string
}

// view is what the templates see.
type view struct {
	topup.Notification
	Title, Lead, Color     string
	StatusText, SourceText string
	When                   string
	NextSteps              []string
}

// kindText is the wording of each kind.
type kindText struct {
	subject func(n topup.Notification) string
	title   string
	lead    string
	color   string
	next    []string
}

var kinds = map[string]kindText{
	topup.KindRechargeSuccess: {
		subject: func(n topup.Notification) string {
			return fmt.Sprintf("Recarga exitosa: %s al %s", or(n.ProductCode, n.OfferID), or(n.SubscriberID, "-"))
		},
		title: "Recarga exitosa",
		lead:  "El operador confirmó la recarga.",
		color: "#1a7f37",
		next: []string{
			"No se requiere ninguna acción: el operador envía un SMS de confirmación al abonado.",
		},
	},
	topup.KindRechargeFailed: {
		subject: func(n topup.Notification) string {
			return fmt.Sprintf("Recarga fallida: %s al %s", or(n.ProductCode, n.OfferID), or(n.SubscriberID, "-"))
		},
		title: "Recarga fallida",
		lead:  "El operador rechazó la recarga; no se acreditó nada al abonado.",
		color: "#cf222e",
		next: []string{
			"Revise el número del abonado y el producto con el cliente.",
			"Si los datos son correctos, solicite una recarga nueva desde el panel; esta no se reintenta sola.",
			"Si el mensaje del operador habla de saldo o de credenciales, avise a operaciones con el ID de transacción.",
		},
	},
	topup.KindRechargeUnavailable: {
		subject: func(n topup.Notification) string {
			return fmt.Sprintf("Recarga en verificación: %s al %s", or(n.ProductCode, n.OfferID), or(n.SubscriberID, "-"))
		},
		title: "Recarga en verificación",
		lead:  "El operador no respondió a tiempo; no se sabe aún si la recarga se acreditó.",
		color: "#9a6700",
		next: []string{
			"No solicite la recarga de nuevo: podría acreditarse dos veces.",
			"El servicio consulta al operador automáticamente y enviará otro aviso con el resultado.",
			"Si no llega ese aviso en 24 horas, comuníquese con operaciones con el ID de transacción.",
		},
	},
	topup.KindRechargeInvalidInvoice: {
		subject: func(n topup.Notification) string {
			return fmt.Sprintf("Factura no procesable: %s", or(n.InvoiceNumber, n.TransactionID))
		},
		title: "Factura no procesable",
		lead:  "La factura no generó ninguna recarga.",
		color: "#cf222e",
		next: []string{
			"Revise el motivo indicado en el mensaje (producto sin mapeo, monto distinto, factura repetida).",
			"Corrija la factura en el ERP y emítala de nuevo si corresponde; esta no se procesará otra vez.",
		},
	},
}

var statusText = map[topup.Status]string{
	topup.StatusSuccess:     "exitosa",
	topup.StatusFailed:      "fallida",
	topup.StatusUnavailable: "en verificación (operador no disponible)",
	topup.StatusRejected:    "rechazada",
	topup.StatusPending:     "pendiente",
}

var sourceText = map[topup.Source]string{
	topup.SourceWorkflowWebhook: "factura del ERP (flujo automático)",
	topup.SourceDashboard:       "panel de recargas",
}

// Render writes the e-mail of notification n: a subject and the same content as plain text
// and HTML, in Spanish. It holds what the recipient needs to act and no secret or raw XML
// (the notification carries neither).
func Render(n topup.Notification) (Message, error) {
	k, ok := kinds[n.Event]
	if !ok {
		return Message{}, fmt.Errorf("email: no template for notification kind %q", n.Event)
	}
	v := view{
		Notification: n, Title: k.title, Lead: k.lead, Color: k.color, NextSteps: k.next,
		StatusText: or(statusText[n.Status], string(n.Status)),
		SourceText: or(sourceText[n.Source], string(n.Source)),
		When:       n.OccurredAt.In(guayaquil).Format("02/01/2006 15:04:05") + " (hora de Ecuador)",
	}
	var text, html bytes.Buffer
	if err := textBody.Execute(&text, v); err != nil {
		return Message{}, fmt.Errorf("email: render text: %w", err)
	}
	if err := htmlBody.Execute(&html, v); err != nil {
		return Message{}, fmt.Errorf("email: render html: %w", err)
	}
	return Message{Subject: oneLine(k.subject(n)), Text: text.String(), HTML: html.String()}, nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// oneLine keeps a header value on one line whatever the data holds.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
