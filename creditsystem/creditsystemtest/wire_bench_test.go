package creditsystemtest

import (
	"encoding/xml"
	"os"
	"testing"
)

// BenchmarkDecodeRequest is the fake's reading of an authorization request, as the client
// writes it (the golden file of the client's wire tests).
func BenchmarkDecodeRequest(b *testing.B) {
	body, err := os.ReadFile("../testdata/golden/GrabarAutorizacion.request.xml")
	if err != nil {
		b.Fatal(err)
	}
	name := xml.Name{Space: "http://tempuri.org/", Local: "GrabarAutorizacion"}
	b.ReportAllocs()
	for b.Loop() {
		req := specs["GrabarAutorizacion"].newRequest()
		if err := decodeRequest(body, name, req); err != nil {
			b.Fatal(err)
		}
	}
}
