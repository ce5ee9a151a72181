// Package wcf is what the fake creditsystem and its httpmock fixtures both write the way a
// WCF service does: SOAPAction, service routing and faults.
package wcf

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"

	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/central"
)

const (
	// EnvelopeNamespace is SOAP 1.1's.
	EnvelopeNamespace = "http://schemas.xmlsoap.org/soap/envelope/"
	// ContentType is the Content-Type of every answer (basicHttpBinding).
	ContentType = "text/xml; charset=utf-8"

	dispatcherNS = "http://schemas.microsoft.com/net/2005/12/windowscommunicationfoundation/dispatcher"
)

// Escape escapes s for XML text and attribute values.
func Escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Service returns the WSDL port type and DataContract namespace of op's service.
func Service(op string) (portType, dcns string, ok bool) {
	if slices.Contains(cartera.WSDLOperations, op) {
		return cartera.WSDLPortType, cartera.WSDLDataContractNamespace, true
	}
	if slices.Contains(central.WSDLOperations, op) {
		return central.WSDLPortType, central.WSDLDataContractNamespace, true
	}
	return "", "", false
}

// SOAPAction follows WCF: namespace, a slash unless it already ends with one, contract,
// operation.
func SOAPAction(ns, portType, op string) string {
	if !strings.HasSuffix(ns, "/") {
		ns += "/"
	}
	return ns + portType + "/" + op
}

// WriteFault writes a WCF fault.
func WriteFault(buf *bytes.Buffer, code, msg string) {
	buf.WriteString(`<s:Envelope xmlns:s="` + EnvelopeNamespace + `"><s:Body><s:Fault><faultcode xmlns:a="` + dispatcherNS + `">` +
		Escape(code) + `</faultcode><faultstring xml:lang="es-EC">` + Escape(msg) + `</faultstring></s:Fault></s:Body></s:Envelope>`)
}

// WriteActionNotSupported writes the fault WCF answers, in an HTTP 500, to a SOAPAction
// that no operation of the endpoint has.
func WriteActionNotSupported(buf *bytes.Buffer, action string) {
	WriteFault(buf, "a:ActionNotSupported", fmt.Sprintf("The message with Action '%s' cannot be processed at the receiver, due to a ContractFilter mismatch at the EndpointDispatcher.", action))
}
