package carrier

import (
	"strconv"
	"testing"

	"github.com/platform/integrations/carrier/internal/umsprot"
)

// BenchmarkTopupEncodeDecode is the client's own work in a top-up round
// trip, without the network: encode the exec_req, decode and classify the
// SPR's success answer.
func BenchmarkTopupEncodeDecode(b *testing.B) {
	answer := readAnswer(b, "success.xml")
	b.ReportAllocs()
	for b.Loop() {
		_, err := umsprot.MarshalRequest(umsprot.Request{Function: FunctionTopup, Data: []umsprot.Data{
			{Name: "EXTERNALOPERATION", Value: ExternalOperationPins},
			{Name: "EXTERNALTRANSACTIONID", Value: "01JAYZ6X8M4Q0S2V3W5Y7Z9A1B"},
			{Name: "OFFERID", Value: "31"},
			{Name: "SUBSCRIBERID", Value: "593987654321"},
			{Name: "QUANTITY", Value: strconv.Itoa(1)},
		}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := interpret(FunctionTopup, 200, answer, &Result{}, identity); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewExternalTransactionID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = NewExternalTransactionID()
	}
}
