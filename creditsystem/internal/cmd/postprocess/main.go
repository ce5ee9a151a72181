// Command postprocess rewrites, in place, a Go file that gowsdl v0.5.0 generated from a WCF
// WSDL; package codegen documents what it changes and why. It is run by go generate:
//
//	go run ./internal/cmd/postprocess -wsdl wsdl/cartera.wsdl -go internal/cartera/cartera.go
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/platform/integrations/creditsystem/internal/codegen"
)

func main() {
	wsdlPath := flag.String("wsdl", "", "WSDL the file was generated from")
	goPath := flag.String("go", "", "gowsdl output to rewrite in place")
	source := flag.String("source", "", "WSDL path to name in the header (default: -wsdl)")
	xsdImport := flag.String("xsd", "github.com/platform/integrations/creditsystem/internal/xsd", "import path of package xsd")
	flag.Parse()
	if *wsdlPath == "" || *goPath == "" {
		flag.Usage()
		os.Exit(2)
	}
	if *source == "" {
		*source = "creditsystem/" + *wsdlPath
	}
	if err := run(*wsdlPath, *goPath, codegen.Options{XSDImport: *xsdImport, Source: *source}); err != nil {
		fmt.Fprintln(os.Stderr, "postprocess:", err)
		os.Exit(1)
	}
}

func run(wsdlPath, goPath string, opt codegen.Options) error {
	wsdl, err := os.ReadFile(wsdlPath)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(goPath)
	if err != nil {
		return err
	}
	out, err := codegen.Postprocess(wsdl, src, opt)
	if err != nil {
		return err
	}
	return os.WriteFile(goPath, out, 0o644)
}
