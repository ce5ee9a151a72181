package creditsystem

import (
	"testing"

	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/central"
)

// The default namespace is spelled out for go doc readers; it must stay the one the WSDL files
// publish, or a default configuration would call operations the service does not have.
func TestDefaultSOAPNamespaceIsTheWSDLs(t *testing.T) {
	if DefaultSOAPNamespace != cartera.WSDLNamespace {
		t.Fatalf("DefaultSOAPNamespace %q, Cartera WSDL %q", DefaultSOAPNamespace, cartera.WSDLNamespace)
	}
	if DefaultSOAPNamespace != central.WSDLNamespace {
		t.Fatalf("DefaultSOAPNamespace %q, Central WSDL %q", DefaultSOAPNamespace, central.WSDLNamespace)
	}
}
