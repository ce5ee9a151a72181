package carrier

import "time"

// Carrier function names, as they go in exec_req's function attribute.
const (
	FunctionTopup          = "sre_topupd_76186"
	FunctionQueryRecharge  = "sre_consulta_recarga"
	FunctionQueryInventory = "sre_consulta_inventario"
)

// Values of STATUS.
const (
	StatusSuccess = "SUCCESS"
	StatusError   = "ERROR"
)

// Values of EXTERNALOPERATION.
const (
	ExternalOperationData = "RECARGA_DATOS"
	ExternalOperationPins = "RECARGA_PINES"
)

// Exchange is the audit copy of one call: what was sent and what came back.
type Exchange struct {
	Function string
	// Request is the exact document sent, except that the PASSWORD value is
	// masked. Nil only when the request was refused before encoding
	// (ErrInvalidRequest).
	Request []byte
	// Response is the answer body as received (at most MaxAnswerSize bytes),
	// with any occurrence of the configured password masked. Nil when no
	// answer arrived.
	Response   []byte
	HTTPStatus int // 0 when no answer arrived
	Duration   time.Duration
}

// Result is the decoded exec_rsp of a call. Every call returns a non-nil
// Result, also together with an error, so that the Exchange can be stored in
// every case; the data fields are filled as far as the answer went (empty
// after a timeout, set after a business error).
type Result struct {
	Status        string // STATUS: SUCCESS or ERROR
	IDCodigo      string // ID_CODIGO: "0" on success
	IDRecarga     string // ID_RECARGA: the carrier's id of the top-up
	Mensaje       string // MENSAJE
	SystemMessage string // SYSTEMMESSAGE
	// ResultCode is the exec_rsp result attribute, or the faultcode of a
	// SOAP fault.
	ResultCode string
	// Diagnostic is the exec_rsp diagnostic attribute, or "SOAP fault
	// <faultcode>: <faultstring>", or the text of a transport error.
	Diagnostic string
	Exchange   Exchange
}

// Inventory is the answer of sre_consulta_inventario: the status fields and
// audit copy of any call, plus one item per offer.
type Inventory struct {
	Result
	Items []InventoryItem
}

// InventoryItem is the stock of one offer. On the wire each item is a run of
// data elements started by OFFERID and followed by DESCRIPCION and CANTIDAD.
type InventoryItem struct {
	OfferID     string
	Description string
	Available   int64 // units that can still be sold
}
