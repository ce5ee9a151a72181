package apidoc

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"

	"github.com/gofiber/fiber/v2"
	"gopkg.in/yaml.v3"
)

// Paths served by Mount.
const (
	PathJSON   = "/openapi.json"
	PathYAML   = "/openapi.yaml"
	PathDocs   = "/docs"
	PathIndex  = "/"
	PathBundle = "/docs/redoc.standalone.js"
)

//go:embed assets/redoc.standalone.js
var redocBundle []byte

// Doc is a loaded OpenAPI document.
type Doc struct {
	// Title and Version are the document's info.
	Title, Version string
	// YAML is the document as written; JSON the same document as JSON.
	YAML, JSON []byte
}

// Load reads an OpenAPI 3.1 document written in YAML and converts it to JSON. It checks only
// what serving needs (a YAML mapping with openapi 3.1.x and an info title); the document's
// validity is a test's job (package apitest), so a service does not carry a validator.
func Load(yamlDoc []byte) (*Doc, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(yamlDoc, &root); err != nil {
		return nil, fmt.Errorf("apidoc: parse: %w", err)
	}
	v, _ := jsonable(&root).(map[string]any)
	if v == nil {
		return nil, fmt.Errorf("apidoc: the document is not a YAML mapping")
	}
	version, _ := v["openapi"].(string)
	if len(version) < 4 || version[:4] != "3.1." {
		return nil, fmt.Errorf("apidoc: document is OpenAPI %q, want 3.1.x", version)
	}
	info, _ := v["info"].(map[string]any)
	title, _ := info["title"].(string)
	if title == "" {
		return nil, fmt.Errorf("apidoc: document has no info.title")
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("apidoc: %w", err)
	}
	docVersion, _ := info["version"].(string)
	return &Doc{Title: title, Version: docVersion, YAML: yamlDoc, JSON: js}, nil
}

// jsonable converts a YAML node to JSON values. Scalars keep the text they were written with
// where JSON has no such type (a date stays a string, 200 as a key is "200").
func jsonable(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return jsonable(n.Content[0])
	case yaml.AliasNode:
		return jsonable(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = jsonable(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = jsonable(c)
		}
		return s
	}
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err == nil {
			return v
		}
	}
	return n.Value
}

var (
	//go:embed assets/docs.html.tmpl
	docsHTML string
	//go:embed assets/index.html.tmpl
	indexHTML string

	docsPage  = template.Must(template.New("docs").Parse(docsHTML))
	indexPage = template.Must(template.New("index").Parse(indexHTML))
)

// Mount serves the document, the documentation page and the index on app.
func Mount(app *fiber.App, d *Doc) {
	var docs, index bytes.Buffer
	data := struct{ Title, Version, JSON, YAML, Docs, Bundle string }{
		d.Title, d.Version, PathJSON, PathYAML, PathDocs, PathBundle,
	}
	if err := docsPage.Execute(&docs, data); err != nil {
		panic(err) // a fixed template and plain strings: cannot fail
	}
	if err := indexPage.Execute(&index, data); err != nil {
		panic(err)
	}
	app.Get(PathJSON, send(fiber.MIMEApplicationJSON, d.JSON))
	app.Get(PathYAML, send("application/yaml", d.YAML))
	app.Get(PathDocs, send(fiber.MIMETextHTMLCharsetUTF8, docs.Bytes()))
	app.Get(PathBundle, send("application/javascript; charset=utf-8", redocBundle))
	app.Get(PathIndex, send(fiber.MIMETextHTMLCharsetUTF8, index.Bytes()))
}

func send(contentType string, body []byte) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, contentType)
		c.Set(fiber.HeaderCacheControl, "no-cache")
		return c.Send(body)
	}
}
