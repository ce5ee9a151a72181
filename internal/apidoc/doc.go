// Package apidoc serves a service's OpenAPI document and its documentation page.
//
// Each service keeps its document in the repository (services/<name>/openapi.yaml), embeds it,
// loads it once with [Load] (which validates it) and mounts it with [Mount]:
//
//	//go:embed openapi.yaml
//	var openapiYAML []byte
//	doc, err := apidoc.Load(openapiYAML)
//	apidoc.Mount(app, doc)
//
// Mount serves GET /openapi.json, GET /openapi.yaml, GET /docs (the document rendered by Redoc,
// whose bundle is embedded: the page works offline) and GET / (an index linking them). The
// Redoc bundle is pinned in the Makefile (REDOC_VERSION) and refreshed with
// `make docs-assets`, which also cuts the bundle's one network load (Redocly's logo on its CDN);
// its licence is assets/redoc.LICENSE. apitest.CheckDocsPage loads the page in headless
// Chromium.
//
// The document is the contract: package apitest validates every request and answer of the
// services' HTTP tests against it and checks that the router and the document list the same
// routes.
package apidoc
