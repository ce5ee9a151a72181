// Package xsdcheck validates XML against the XML Schema inside WSDL files, for the subset of
// XML Schema 1.0 that a WCF WSDL uses. It exists for tests: the client's requests and the fake
// server's answers are checked against wsdl/*.wsdl, as a schema-validating SOAP stack would
// check them. There is no pure-Go XSD validator to lean on, and cgo bindings to libxml2 are
// not an option on a machine that has Go only.
//
// The subset:
//   - xs:schema with targetNamespace and elementFormDefault (the form attribute of a local
//     element overrides it); xs:import only names a namespace that another schema of the set
//     declares;
//   - global xs:element, named and anonymous xs:complexType with an xs:sequence of
//     xs:element (name, type, minOccurs, maxOccurs, nillable), named and anonymous
//     xs:simpleType restricting a built-in or another simple type with length, minLength,
//     maxLength, pattern and enumeration;
//   - the built-in types xs:string, xs:boolean, xs:decimal, xs:integer, xs:long, xs:int,
//     xs:short, xs:byte, xs:unsignedLong, xs:unsignedInt, xs:unsignedShort,
//     xs:unsignedByte, xs:dateTime and xs:date, checked lexically (and in range);
//   - in an instance: elements in the namespace the schema puts them in, in sequence order and
//     within minOccurs and maxOccurs; unknown elements, undeclared attributes, character data
//     in a complex type and child elements in a simple one are errors; xsi:nil only on an
//     element declared nillable="true", and then with no content.
//
// A construct outside the subset (xs:choice, xs:complexContent, xs:attribute in a type, a
// facet such as minInclusive, xs:QName, xsi:type...) is reported when an instance reaches it,
// not when the schema is read: the Microsoft serialization schema every WCF WSDL carries uses
// some of them, in types no DataContract refers to.
//
// ValidateEnvelope checks a SOAP 1.1 envelope: its Body holds one element of the schema, or a
// SOAP fault, whose structure (faultcode, faultstring, faultactor, detail) comes from the
// SOAP 1.1 envelope schema, since a WSDL does not declare it.
package xsdcheck

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Namespaces the validator knows.
const (
	SchemaNamespace   = "http://www.w3.org/2001/XMLSchema"
	InstanceNamespace = "http://www.w3.org/2001/XMLSchema-instance"
	WSDLNamespace     = "http://schemas.xmlsoap.org/wsdl/"
	EnvelopeNamespace = "http://schemas.xmlsoap.org/soap/envelope/"
	xmlNamespace      = "http://www.w3.org/XML/1998/namespace"
)

// Set is the schemas of one or more WSDL files, merged by namespace.
type Set struct {
	elements   map[xml.Name]*element
	types      map[xml.Name]any // *complexType or *simpleType
	namespaces map[string]bool  // target namespaces of the schemas
	imports    []xml.Name       // {namespace, schema that imports it}, checked after all are read
}

type element struct {
	name     xml.Name
	typeName xml.Name // a named type, or
	anon     any      // an anonymous *complexType or *simpleType
	nillable bool
	min, max int // max < 0: unbounded
	// unsupported names a construct of the declaration outside the subset.
	unsupported string
}

type complexType struct {
	name        string // "" for an anonymous type
	seq         []*element
	unsupported string
}

type simpleType struct {
	name        string
	base        xml.Name // a built-in (SchemaNamespace) or another simple type
	baseAnon    *simpleType
	length      []int // length, minLength, maxLength; -1 when absent
	patterns    []*regexp.Regexp
	enums       []string
	unsupported string
}

// Load reads WSDL files into one Set.
func Load(paths ...string) (*Set, error) {
	var docs [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, b)
	}
	return Parse(docs...)
}

// Parse reads the xs:schema elements of WSDL documents (or of bare schema documents) into
// one Set. Two documents may declare the same component (every WCF WSDL carries the
// serialization schema); the first declaration is kept.
func Parse(docs ...[]byte) (*Set, error) {
	s := &Set{elements: map[xml.Name]*element{}, types: map[xml.Name]any{}, namespaces: map[string]bool{}}
	for i, doc := range docs {
		root, err := parseTree(doc)
		if err != nil {
			return nil, fmt.Errorf("xsdcheck: document %d: %w", i+1, err)
		}
		var schemas []*node
		switch root.name {
		case xml.Name{Space: SchemaNamespace, Local: "schema"}:
			schemas = []*node{root}
		case xml.Name{Space: WSDLNamespace, Local: "definitions"}:
			for _, t := range root.children(WSDLNamespace, "types") {
				schemas = append(schemas, t.children(SchemaNamespace, "schema")...)
			}
		default:
			return nil, fmt.Errorf("xsdcheck: document %d: root {%s}%s is neither a WSDL nor a schema", i+1, root.name.Space, root.name.Local)
		}
		for _, sc := range schemas {
			if err := s.addSchema(sc); err != nil {
				return nil, fmt.Errorf("xsdcheck: document %d: %w", i+1, err)
			}
		}
	}
	for _, imp := range s.imports {
		if !s.namespaces[imp.Space] {
			return nil, fmt.Errorf("xsdcheck: schema %s imports %s, which no schema of the set declares", imp.Local, imp.Space)
		}
	}
	return s, nil
}

// schemaCtx is what a component needs from its enclosing xs:schema.
type schemaCtx struct {
	tns       string
	qualified bool // elementFormDefault="qualified"
}

func (s *Set) addSchema(sc *node) error {
	ctx := schemaCtx{tns: sc.attr("targetNamespace"), qualified: sc.attr("elementFormDefault") == "qualified"}
	s.namespaces[ctx.tns] = true
	for _, c := range sc.kids {
		if c.name.Space != SchemaNamespace {
			return fmt.Errorf("schema %s: unexpected {%s}%s", ctx.tns, c.name.Space, c.name.Local)
		}
		name := xml.Name{Space: ctx.tns, Local: c.attr("name")}
		switch c.name.Local {
		case "import":
			s.imports = append(s.imports, xml.Name{Space: c.attr("namespace"), Local: ctx.tns})
		case "annotation", "attribute":
			// Global attributes are declared by the serialization schema only; an instance
			// attribute other than xsi:nil and namespace declarations is an error anyway.
		case "element":
			if _, dup := s.elements[name]; dup {
				continue
			}
			e, err := parseElement(c, ctx, true)
			if err != nil {
				return err
			}
			s.elements[name] = e
		case "complexType":
			if _, dup := s.types[name]; dup {
				continue
			}
			t, err := parseComplexType(c, ctx)
			if err != nil {
				return err
			}
			s.types[name] = t
		case "simpleType":
			if _, dup := s.types[name]; dup {
				continue
			}
			t, err := parseSimpleType(c)
			if err != nil {
				return err
			}
			s.types[name] = t
		default:
			return fmt.Errorf("schema %s: xs:%s is outside the subset xsdcheck reads", ctx.tns, c.name.Local)
		}
	}
	return nil
}

func parseElement(n *node, ctx schemaCtx, global bool) (*element, error) {
	e := &element{min: 1, max: 1}
	local := n.attr("name")
	if local == "" {
		if n.has("ref") {
			e.unsupported = "xs:element ref"
			e.name = n.qname(n.attr("ref"))
			return e, nil
		}
		return nil, fmt.Errorf("schema %s: xs:element without a name", ctx.tns)
	}
	qualified := global || ctx.qualified
	switch n.attr("form") {
	case "qualified":
		qualified = true
	case "unqualified":
		qualified = global
	}
	e.name.Local = local
	if qualified {
		e.name.Space = ctx.tns
	}
	var err error
	if e.min, err = occurs(n, "minOccurs", 1); err != nil {
		return nil, err
	}
	if e.max, err = occurs(n, "maxOccurs", 1); err != nil {
		return nil, err
	}
	e.nillable = n.attr("nillable") == "true" || n.attr("nillable") == "1"
	if n.has("default") || n.has("fixed") || n.has("substitutionGroup") || n.attr("abstract") == "true" {
		e.unsupported = "default, fixed, abstract or substitutionGroup on xs:element " + local
	}
	if t := n.attr("type"); t != "" {
		e.typeName = n.qname(t)
	}
	for _, c := range n.kids {
		switch {
		case c.is(SchemaNamespace, "annotation"):
		case c.is(SchemaNamespace, "complexType") && e.anon == nil && e.typeName == (xml.Name{}):
			if e.anon, err = parseComplexType(c, ctx); err != nil {
				return nil, err
			}
		case c.is(SchemaNamespace, "simpleType") && e.anon == nil && e.typeName == (xml.Name{}):
			if e.anon, err = parseSimpleType(c); err != nil {
				return nil, err
			}
		default:
			e.unsupported = "{" + c.name.Space + "}" + c.name.Local + " in xs:element " + local
		}
	}
	if e.anon == nil && e.typeName == (xml.Name{}) {
		e.typeName = xml.Name{Space: SchemaNamespace, Local: "anyType"}
	}
	return e, nil
}

func occurs(n *node, attr string, def int) (int, error) {
	v := n.attr(attr)
	switch v {
	case "":
		return def, nil
	case "unbounded":
		if attr == "maxOccurs" {
			return -1, nil
		}
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return 0, fmt.Errorf("xs:element %s: invalid %s %q", n.attr("name"), attr, v)
	}
	return i, nil
}

func parseComplexType(n *node, ctx schemaCtx) (*complexType, error) {
	t := &complexType{name: n.attr("name")}
	if m := n.attr("mixed"); m == "true" || m == "1" {
		t.unsupported = "mixed content"
	}
	for _, c := range n.kids {
		switch {
		case c.is(SchemaNamespace, "annotation"):
		case c.is(SchemaNamespace, "sequence") && t.seq == nil:
			if c.has("minOccurs") || c.has("maxOccurs") {
				t.unsupported = "minOccurs or maxOccurs on xs:sequence"
			}
			t.seq = []*element{}
			for _, p := range c.kids {
				switch {
				case p.is(SchemaNamespace, "annotation"):
				case p.is(SchemaNamespace, "element"):
					e, err := parseElement(p, ctx, false)
					if err != nil {
						return nil, err
					}
					t.seq = append(t.seq, e)
				default:
					t.unsupported = "xs:" + p.name.Local + " in xs:sequence"
				}
			}
		default:
			t.unsupported = "xs:" + c.name.Local + " in xs:complexType"
		}
	}
	return t, nil
}

func parseSimpleType(n *node) (*simpleType, error) {
	t := &simpleType{name: n.attr("name"), length: []int{-1, -1, -1}}
	for _, c := range n.kids {
		switch {
		case c.is(SchemaNamespace, "annotation"):
		case c.is(SchemaNamespace, "restriction"):
			if b := c.attr("base"); b != "" {
				t.base = c.qname(b)
			}
			for _, f := range c.kids {
				if f.name.Space != SchemaNamespace {
					t.unsupported = "{" + f.name.Space + "}" + f.name.Local + " in xs:restriction"
					continue
				}
				v := f.attr("value")
				switch f.name.Local {
				case "annotation":
				case "simpleType":
					base, err := parseSimpleType(f)
					if err != nil {
						return nil, err
					}
					t.baseAnon = base
				case "length", "minLength", "maxLength":
					i, err := strconv.Atoi(v)
					if err != nil || i < 0 {
						return nil, fmt.Errorf("simple type %s: invalid xs:%s %q", t.name, f.name.Local, v)
					}
					t.length[map[string]int{"length": 0, "minLength": 1, "maxLength": 2}[f.name.Local]] = i
				case "pattern":
					re, err := regexp.Compile(`^(?:` + v + `)$`)
					if err != nil {
						t.unsupported = "pattern " + strconv.Quote(v) + " (not a Go regular expression)"
						continue
					}
					t.patterns = append(t.patterns, re)
				case "enumeration":
					t.enums = append(t.enums, v)
				default:
					t.unsupported = "facet xs:" + f.name.Local
				}
			}
			if t.base == (xml.Name{}) && t.baseAnon == nil {
				return nil, fmt.Errorf("simple type %s: xs:restriction without a base", t.name)
			}
		default:
			t.unsupported = "xs:" + c.name.Local + " in xs:simpleType"
		}
	}
	if t.base == (xml.Name{}) && t.baseAnon == nil && t.unsupported == "" {
		return nil, fmt.Errorf("simple type %s: no xs:restriction", t.name)
	}
	return t, nil
}

// Problem is one way an instance breaks the schema.
type Problem struct {
	Path    string // /Envelope/Body/GrabarPagoTarjeta/oSolicitud/dFechaPago (local names)
	Message string
}

func (p Problem) String() string { return p.Path + ": " + p.Message }

// Error lists every problem of an instance.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("xsdcheck: the instance is not valid:")
	for _, p := range e.Problems {
		b.WriteString("\n\t" + p.String())
	}
	return b.String()
}

type validator struct {
	set      *Set
	problems []Problem
}

func (v *validator) report(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return &Error{Problems: v.problems}
}

// Validate checks a document whose root is a global element of the set.
func (s *Set) Validate(doc []byte) error {
	root, err := parseTree(doc)
	if err != nil {
		return fmt.Errorf("xsdcheck: %w", err)
	}
	v := &validator{set: s}
	v.global(root, "/"+root.name.Local)
	return v.err()
}

// ValidateEnvelope checks a SOAP 1.1 envelope: an optional Header (not checked), then a Body
// with one element, which is either a global element of the set or a SOAP fault.
func (s *Set) ValidateEnvelope(doc []byte) error {
	root, err := parseTree(doc)
	if err != nil {
		return fmt.Errorf("xsdcheck: %w", err)
	}
	v := &validator{set: s}
	path := "/" + root.name.Local
	if !root.is(EnvelopeNamespace, "Envelope") {
		v.report(path, "root {%s}%s is not a SOAP 1.1 Envelope", root.name.Space, root.name.Local)
		return v.err()
	}
	v.noAttributes(root, path)
	v.noText(root, path)
	kids := root.kids
	if len(kids) > 0 && kids[0].is(EnvelopeNamespace, "Header") {
		kids = kids[1:]
	}
	if len(kids) != 1 || !kids[0].is(EnvelopeNamespace, "Body") {
		v.report(path, "want an optional Header and one Body, got %s", names(root.kids))
		return v.err()
	}
	body := kids[0]
	path += "/Body"
	v.noAttributes(body, path)
	v.noText(body, path)
	if len(body.kids) != 1 {
		v.report(path, "want one element in the Body, got %s", names(body.kids))
		return v.err()
	}
	if el := body.kids[0]; el.is(EnvelopeNamespace, "Fault") {
		v.fault(el, path+"/Fault")
	} else {
		v.global(el, path+"/"+el.name.Local)
	}
	return v.err()
}

func names(ns []*node) string {
	if len(ns) == 0 {
		return "nothing"
	}
	var parts []string
	for _, n := range ns {
		parts = append(parts, "{"+n.name.Space+"}"+n.name.Local)
	}
	return strings.Join(parts, ", ")
}

func (v *validator) global(n *node, path string) {
	e, ok := v.set.elements[n.name]
	if !ok {
		v.report(path, "{%s}%s is not a global element of the schema", n.name.Space, n.name.Local)
		return
	}
	v.element(n, e, path)
}

// fault checks a SOAP 1.1 fault: faultcode (a QName whose prefix is declared), faultstring
// (xml:lang allowed), an optional faultactor and an optional detail with any content, all
// unqualified.
func (v *validator) fault(n *node, path string) {
	v.noAttributes(n, path)
	v.noText(n, path)
	want := []struct {
		name     string
		required bool
	}{{"faultcode", true}, {"faultstring", true}, {"faultactor", false}, {"detail", false}}
	i := 0
	for _, k := range n.kids {
		for i < len(want) && k.name != (xml.Name{Local: want[i].name}) {
			if want[i].required {
				v.report(path, "missing %s", want[i].name)
			}
			i++
		}
		if i == len(want) {
			v.report(path+"/"+k.name.Local, "{%s}%s is not a member of a SOAP 1.1 fault here", k.name.Space, k.name.Local)
			continue
		}
		kp := path + "/" + k.name.Local
		switch want[i].name {
		case "detail":
			// Any content.
		case "faultstring":
			for _, a := range k.attrs {
				if !isNamespaceDecl(a) && a.Name != (xml.Name{Space: xmlNamespace, Local: "lang"}) {
					v.report(kp, "attribute {%s}%s is not declared", a.Name.Space, a.Name.Local)
				}
			}
			v.noChildren(k, kp)
		default:
			v.noAttributes(k, kp)
			v.noChildren(k, kp)
			if want[i].name == "faultcode" {
				code := strings.TrimSpace(k.text)
				prefix, local, found := strings.Cut(code, ":")
				if !found {
					prefix, local = "", code
				}
				if _, declared := k.ns[prefix]; (found && !declared) || !isNCName(local) || (found && !isNCName(prefix)) {
					v.report(kp, "%q is not a QName with a declared prefix", code)
				}
			}
		}
		i++
	}
	for ; i < len(want); i++ {
		if want[i].required {
			v.report(path, "missing %s", want[i].name)
		}
	}
}

var ncName = regexp.MustCompile(`^[\pL_][\pL\pN._\-]*$`)

func isNCName(s string) bool { return ncName.MatchString(s) }

func isNamespaceDecl(a xml.Attr) bool {
	return a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns")
}

func (v *validator) noAttributes(n *node, path string) {
	for _, a := range n.attrs {
		if !isNamespaceDecl(a) {
			v.report(path, "attribute {%s}%s is not declared", a.Name.Space, a.Name.Local)
		}
	}
}

func (v *validator) noText(n *node, path string) {
	if strings.Trim(n.text, " \t\r\n") != "" {
		v.report(path, "character data %q in element-only content", clip(n.text))
	}
}

func (v *validator) noChildren(n *node, path string) {
	if len(n.kids) > 0 {
		v.report(path, "child element %s in a simple type", names(n.kids[:1]))
	}
}

// element checks n against its declaration e.
func (v *validator) element(n *node, e *element, path string) {
	if e.unsupported != "" {
		v.report(path, "the declaration uses %s, outside the subset xsdcheck checks", e.unsupported)
		return
	}
	nilled := false
	for _, a := range n.attrs {
		switch {
		case isNamespaceDecl(a):
		case a.Name == xml.Name{Space: InstanceNamespace, Local: "nil"}:
			if !e.nillable {
				v.report(path, "xsi:nil on %s, which the schema does not declare nillable", e.name.Local)
			}
			switch strings.Trim(a.Value, " \t\r\n") {
			case "true", "1":
				nilled = true
			case "false", "0":
			default:
				v.report(path, "xsi:nil %q is not a boolean", a.Value)
			}
		case a.Name.Space == InstanceNamespace:
			v.report(path, "xsi:%s is outside the subset xsdcheck checks", a.Name.Local)
		default:
			v.report(path, "attribute {%s}%s is not declared", a.Name.Space, a.Name.Local)
		}
	}
	if nilled {
		if len(n.kids) > 0 || n.text != "" {
			v.report(path, "an element with xsi:nil=\"true\" must be empty")
		}
		return
	}
	t := e.anon
	if t == nil {
		t = v.set.lookup(e.typeName)
	}
	switch t := t.(type) {
	case *complexType:
		v.complex(n, t, path)
	case *simpleType:
		v.noChildren(n, path)
		v.simple(n.text, t, path)
	case builtin:
		v.noChildren(n, path)
		if msg := t.check(n.text); msg != "" {
			v.report(path, "%s", msg)
		}
	default:
		v.report(path, "type {%s}%s is not declared, or outside the subset xsdcheck checks", e.typeName.Space, e.typeName.Local)
	}
}

func (s *Set) lookup(name xml.Name) any {
	if name.Space == SchemaNamespace {
		if b, ok := builtins[name.Local]; ok {
			return b
		}
		return nil
	}
	return s.types[name]
}

func (v *validator) complex(n *node, t *complexType, path string) {
	if t.unsupported != "" {
		v.report(path, "type %s uses %s, outside the subset xsdcheck checks", t.name, t.unsupported)
		return
	}
	v.noText(n, path)
	i, count := 0, 0 // the particle being matched and how often it matched
	for _, k := range n.kids {
		kp := path + "/" + k.name.Local
		j := -1
		for p := i; p < len(t.seq); p++ {
			if t.seq[p].name == k.name {
				j = p
				break
			}
		}
		switch {
		case j < 0:
			v.misplaced(k, t, i, kp)
			continue
		case j == i && t.seq[i].max >= 0 && count >= t.seq[i].max:
			v.report(kp, "%s occurs more than maxOccurs=%d times", k.name.Local, t.seq[i].max)
			continue
		case j > i:
			v.missing(t, i, j, count, kp, "before "+k.name.Local)
			i, count = j, 0
		}
		count++
		v.element(k, t.seq[i], kp)
	}
	v.missing(t, i, len(t.seq), count, path, "at the end")
}

// missing reports the required particles in seq[from:to] that were not matched; count is
// how often seq[from] matched.
func (v *validator) missing(t *complexType, from, to, count int, path, where string) {
	for p := from; p < to; p++ {
		if p > from {
			count = 0
		}
		if count < t.seq[p].min {
			v.report(path, "missing %s (minOccurs=%d) %s", t.seq[p].name.Local, t.seq[p].min, where)
		}
	}
}

// misplaced reports a child that matches no particle at or after seq[i].
func (v *validator) misplaced(k *node, t *complexType, i int, path string) {
	for p := 0; p < i; p++ {
		if t.seq[p].name == k.name {
			v.report(path, "%s is out of the sequence order of %s (after %s)", k.name.Local, typeName(t), t.seq[i].name.Local)
			return
		}
	}
	for _, p := range t.seq {
		if p.name.Local == k.name.Local {
			v.report(path, "%s is in namespace %q; %s declares it in %q", k.name.Local, k.name.Space, typeName(t), p.name.Space)
			return
		}
	}
	v.report(path, "{%s}%s is not a member of %s", k.name.Space, k.name.Local, typeName(t))
}

func typeName(t *complexType) string {
	if t.name == "" {
		return "the anonymous type"
	}
	return t.name
}

func (v *validator) simple(text string, t *simpleType, path string) {
	if t.unsupported != "" {
		v.report(path, "simple type %s uses %s, outside the subset xsdcheck checks", t.name, t.unsupported)
		return
	}
	var base any = t.baseAnon
	if t.baseAnon == nil {
		base = v.set.lookup(t.base)
	}
	switch b := base.(type) {
	case *simpleType:
		v.simple(text, b, path)
	case builtin:
		if msg := b.check(text); msg != "" {
			v.report(path, "%s", msg)
			return
		}
	default:
		v.report(path, "base type {%s}%s of %s is not declared, or outside the subset", t.base.Space, t.base.Local, t.name)
		return
	}
	value := text
	if b, ok := base.(builtin); !ok || b.name != "string" {
		value = strings.Trim(text, " \t\r\n")
	}
	n := len([]rune(value))
	for i, facet := range []string{"length", "minLength", "maxLength"} {
		l := t.length[i]
		if l >= 0 && ((i == 0 && n != l) || (i == 1 && n < l) || (i == 2 && n > l)) {
			v.report(path, "%q has %d characters, against xs:%s %d", clip(value), n, facet, l)
		}
	}
	for _, re := range t.patterns {
		if !re.MatchString(value) {
			v.report(path, "%q does not match the pattern of %s", clip(value), t.name)
		}
	}
	if len(t.enums) > 0 {
		ok := false
		for _, e := range t.enums {
			ok = ok || e == value
		}
		if !ok {
			v.report(path, "%q is not one of the values of %s", clip(value), t.name)
		}
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// node is an element of a parsed document, with the namespace prefixes in scope.
type node struct {
	name  xml.Name
	attrs []xml.Attr
	ns    map[string]string // prefix ("" for the default) -> namespace, in scope
	text  string            // the element's own character data
	kids  []*node
}

func (n *node) is(space, local string) bool { return n.name == xml.Name{Space: space, Local: local} }

// attr returns an unqualified attribute.
func (n *node) attr(local string) string {
	for _, a := range n.attrs {
		if a.Name.Space == "" && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

func (n *node) has(local string) bool {
	for _, a := range n.attrs {
		if a.Name.Space == "" && a.Name.Local == local {
			return true
		}
	}
	return false
}

func (n *node) children(space, local string) []*node {
	var out []*node
	for _, k := range n.kids {
		if k.is(space, local) {
			out = append(out, k)
		}
	}
	return out
}

// qname resolves a QName attribute value with the prefixes in scope at n. An undeclared
// prefix is kept as the namespace, so that the reference resolves to nothing.
func (n *node) qname(v string) xml.Name {
	prefix, local, found := strings.Cut(strings.TrimSpace(v), ":")
	if !found {
		return xml.Name{Space: n.ns[""], Local: prefix}
	}
	if ns, ok := n.ns[prefix]; ok {
		return xml.Name{Space: ns, Local: local}
	}
	return xml.Name{Space: prefix, Local: local}
}

// parseTree reads a document into nodes, keeping comments and processing instructions out.
func parseTree(doc []byte) (*node, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	var stack []*node
	var root *node
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{name: t.Name, attrs: t.Copy().Attr, ns: map[string]string{"xml": xmlNamespace}}
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				for k, v := range parent.ns {
					n.ns[k] = v
				}
				parent.kids = append(parent.kids, n)
			} else if root == nil {
				root = n
			} else {
				return nil, errors.New("more than one root element")
			}
			for _, a := range t.Attr {
				switch {
				case a.Name.Space == "xmlns":
					n.ns[a.Name.Local] = a.Value
				case a.Name.Space == "" && a.Name.Local == "xmlns":
					n.ns[""] = a.Value
				}
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			} else if strings.Trim(string(t), " \t\r\n") != "" {
				return nil, errors.New("character data outside the root element")
			}
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}
