package creditsystem

// The generated SOAP code: gowsdl (a go.mod dependency, run as a library) and then the
// post-processor, in one command so that nobody edits generated files. TestGeneratedCodeIsFresh
// checks that these commands reproduce the committed files byte for byte.
//
//go:generate go run ./internal/cmd/generate -wsdl wsdl/cartera.wsdl -pkg cartera -out internal/cartera/cartera.go
//go:generate go run ./internal/cmd/generate -wsdl wsdl/central.wsdl -pkg central -out internal/central/central.go
