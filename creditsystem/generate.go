package creditsystem

// The generated SOAP code: gowsdl (pinned in go.mod as a tool) and then the post-processor,
// which is part of generation so that nobody edits generated files. TestGeneratedCodeIsFresh
// checks that these commands reproduce the committed files byte for byte.
//
//go:generate go tool gowsdl -d internal -p cartera -o cartera.go wsdl/cartera.wsdl
//go:generate go run ./internal/cmd/postprocess -wsdl wsdl/cartera.wsdl -go internal/cartera/cartera.go
//go:generate go tool gowsdl -d internal -p central -o central.go wsdl/central.wsdl
//go:generate go run ./internal/cmd/postprocess -wsdl wsdl/central.wsdl -go internal/central/central.go
