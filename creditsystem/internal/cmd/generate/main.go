// Command generate writes the SOAP code of one WSDL: gowsdl v0.5.0, used as a library, then the
// post-processor of package codegen, which documents what it changes and why. It is run by
// go generate (see creditsystem/generate.go):
//
//	go run ./internal/cmd/generate -wsdl wsdl/cartera.wsdl -pkg cartera -out internal/cartera/cartera.go
//
// gowsdl v0.5.0's Start generates types and operations in two goroutines that both write one
// map, which sometimes kills the process with "fatal error: concurrent map writes" (the gowsdl
// command crashed in CI this way). This command runs Start on one P with the garbage collector
// off: the runtime never preempts a goroutine inside a map write (runtime code is not an
// asynchronous safe point) and, without GC assists, nothing parks it there, so the two writes
// cannot overlap. The output is what the gowsdl command writes, byte for byte.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/hooklift/gowsdl"

	"github.com/platform/integrations/creditsystem/internal/codegen"
)

func main() {
	wsdlPath := flag.String("wsdl", "", "WSDL to generate from")
	pkg := flag.String("pkg", "", "package name of the generated file")
	out := flag.String("out", "", "Go file to write (its directory is created)")
	source := flag.String("source", "", "WSDL path to name in the header (default: creditsystem/ + -wsdl)")
	xsdImport := flag.String("xsd", "github.com/platform/integrations/creditsystem/internal/xsd", "import path of package xsd")
	flag.Parse()
	if *wsdlPath == "" || *pkg == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if *source == "" {
		*source = "creditsystem/" + filepath.ToSlash(*wsdlPath)
	}
	if err := run(*wsdlPath, *pkg, *out, codegen.Options{XSDImport: *xsdImport, Source: *source}); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(wsdlPath, pkg, out string, opt codegen.Options) error {
	raw, err := gowsdlSource(wsdlPath, pkg)
	if err != nil {
		return err
	}
	wsdl, err := os.ReadFile(wsdlPath)
	if err != nil {
		return err
	}
	src, err := codegen.Postprocess(wsdl, raw, opt)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

// gowsdlSource is what cmd/gowsdl v0.5.0 writes for wsdlPath: header, types, operations and
// soap parts, gofmt-ed.
func gowsdlSource(wsdlPath, pkg string) ([]byte, error) {
	g, err := gowsdl.NewGoWSDL(wsdlPath, pkg, false, true)
	if err != nil {
		return nil, err
	}
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
	parts, err := g.Start()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for _, part := range []string{"header", "types", "operations", "soap"} {
		buf.Write(parts[part])
	}
	return format.Source(buf.Bytes())
}
