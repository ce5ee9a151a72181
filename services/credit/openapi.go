package main

import (
	_ "embed"
	"sync"

	"github.com/platform/integrations/internal/apidoc"
)

// openapiYAML is the service's API contract (OpenAPI 3.1), served at /openapi.json,
// /openapi.yaml and rendered at /docs (internal/apidoc). Every HTTP test checks its traffic
// against it (contract_test.go).
//
//go:embed openapi.yaml
var openapiYAML []byte

var openapiDoc = sync.OnceValues(func() (*apidoc.Doc, error) { return apidoc.Load(openapiYAML) })
