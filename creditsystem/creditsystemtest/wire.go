package creditsystemtest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/platform/integrations/creditsystem/creditsystemtest/internal/wcf"
	"github.com/platform/integrations/creditsystem/internal/xsd"
)

// writeAnswer writes an answer the way WCF's DataContractSerializer does: the result element
// declares the DataContract namespace as prefix a and xsi as i, and every member is written,
// a nil one as i:nil="true" when the WSDL declares it nillable (the generated tag
// xsd:"nillable"). A member without a value that is not nillable (a value type:
// nNumeroOperacion, nPagoContado of an error answer) is omitted, as its minOccurs="0"
// allows: i:nil there is invalid against the schema.
func writeAnswer(buf *bytes.Buffer, ns, dcns, op string, result any) {
	buf.WriteString(`<s:Envelope xmlns:s="` + wcf.EnvelopeNamespace + `"><s:Body><` + op + `Response xmlns="` + wcf.Escape(ns) + `">`)
	rv := reflect.ValueOf(result)
	if result == nil || (rv.Kind() == reflect.Pointer && rv.IsNil()) {
		buf.WriteString(`<` + op + `Result i:nil="true" xmlns:i="` + xsd.InstanceNamespace + `"/>`)
	} else {
		buf.WriteString(`<` + op + `Result xmlns:a="` + wcf.Escape(dcns) + `" xmlns:i="` + xsd.InstanceNamespace + `">`)
		writeMembers(buf, dcns, rv.Elem())
		buf.WriteString(`</` + op + `Result>`)
	}
	buf.WriteString(`</` + op + `Response></s:Body></s:Envelope>`)
}

var texterType = reflect.TypeFor[xsd.Texter]()

func writeMembers(buf *bytes.Buffer, dcns string, v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "XMLName" {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("xml"), ",")
		ns, local, found := strings.Cut(tag, " ")
		if !found {
			ns, local = "", tag
		}
		name := local
		if ns == dcns {
			name = "a:" + local
		}
		fv := v.Field(i)
		nillable := f.Tag.Get("xsd") == "nillable"
		if fv.Kind() == reflect.Slice {
			for j := 0; j < fv.Len(); j++ {
				writeValue(buf, dcns, name, nillable, fv.Index(j))
			}
			continue
		}
		writeValue(buf, dcns, name, nillable, fv)
	}
}

func writeValue(buf *bytes.Buffer, dcns, name string, nillable bool, v reflect.Value) {
	nilElem := func() {
		if nillable {
			buf.WriteString(`<` + name + ` i:nil="true"/>`)
		}
	}
	if p, ok := v.Interface().(xsd.Pointer); ok {
		pointee := p.Pointee()
		if pointee == nil {
			nilElem()
			return
		}
		v = reflect.ValueOf(pointee)
	}
	switch {
	case v.Type().Implements(texterType):
		s, ok := v.Interface().(xsd.Texter).XMLText()
		if !ok {
			nilElem()
			return
		}
		buf.WriteString(`<` + name + `>` + wcf.Escape(s) + `</` + name + `>`)
	case v.Kind() == reflect.Bool:
		fmt.Fprintf(buf, "<%s>%t</%s>", name, v.Bool(), name)
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			nilElem()
			return
		}
		buf.WriteString(`<` + name + `>`)
		writeMembers(buf, dcns, v.Elem())
		buf.WriteString(`</` + name + `>`)
	default:
		panic(fmt.Sprintf("creditsystemtest: cannot write %s of kind %s", name, v.Kind()))
	}
}

var errNoOperation = errors.New("no operation element in the SOAP body")

// operationElement walks to the first element of the SOAP body.
func operationElement(d *xml.Decoder) (xml.StartElement, error) {
	inBody := false
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case !inBody && se.Name.Space == wcf.EnvelopeNamespace && se.Name.Local == "Envelope":
		case !inBody && se.Name.Space == wcf.EnvelopeNamespace && se.Name.Local == "Header":
			if err := d.Skip(); err != nil {
				return xml.StartElement{}, err
			}
		case !inBody && se.Name.Space == wcf.EnvelopeNamespace && se.Name.Local == "Body":
			inBody = true
		case inBody:
			return se, nil
		default:
			return xml.StartElement{}, errNoOperation
		}
	}
}

// decodeRequest decodes the operation element into v, a generated operation struct.
func decodeRequest(body []byte, name xml.Name, v any) error {
	d, release := xsd.NewDecoder(body)
	defer release()
	se, err := operationElement(d)
	if err != nil {
		return err
	}
	if se.Name != name {
		return fmt.Errorf("expected element {%s}%s, got {%s}%s", name.Space, name.Local, se.Name.Space, se.Name.Local)
	}
	return d.DecodeElement(v, &se)
}

// Request is what the fake received for an operation, flattened for assertions.
type Request struct {
	Operation string
	// SOAPAction is the action without the quotes SOAP 1.1 puts around it; Header has the
	// header as sent.
	SOAPAction string
	// Header holds the HTTP headers of the request (SOAPAction, Content-Type, ...).
	Header http.Header
	// Fields holds the scalar members of the request DataContract by SOAP name
	// (cCodigoOtp, cNumeroTarjeta, nMonto, ...), as written on the wire. A nil or absent
	// member has no entry.
	Fields map[string]string
	// Lists holds list members (iArticuloVm, iFormaPagoVm): one map per item, same rules.
	Lists map[string][]map[string]string
	// Body is the request as received.
	Body []byte
}

// Field returns a scalar member and whether it was present.
func (r Request) Field(name string) (string, bool) {
	v, ok := r.Fields[name]
	return v, ok
}

// flatten reads the members of the request DataContract (the only child of the operation
// element) without the generated types, so that assertions do not share their mistakes.
func flatten(body []byte) (map[string]string, map[string][]map[string]string) {
	fields := map[string]string{}
	lists := map[string][]map[string]string{}
	d := xml.NewDecoder(bytes.NewReader(body))
	if _, err := operationElement(d); err != nil {
		return fields, lists
	}
	// The parameter element (oSolicitud).
	if _, err := nextStart(d); err != nil {
		return fields, lists
	}
	for {
		se, err := nextStart(d)
		if err != nil {
			return fields, lists
		}
		text, children, isNil, err := readNode(d, se)
		if err != nil {
			return fields, lists
		}
		switch {
		case len(children) > 0:
			lists[se.Name.Local] = children
		case !isNil:
			fields[se.Name.Local] = text
		}
	}
}

// nextStart returns the next start element at this level, or an error at the end of the
// enclosing element.
func nextStart(d *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.EndElement:
			return xml.StartElement{}, errors.New("end of element")
		}
	}
}

// readNode reads an element: its text, or its item children as maps of their leaves.
func readNode(d *xml.Decoder, start xml.StartElement) (string, []map[string]string, bool, error) {
	isNil := false
	for _, a := range start.Attr {
		if a.Name.Local == "nil" && a.Name.Space == xsd.InstanceNamespace && a.Value == "true" {
			isNil = true
		}
	}
	var text strings.Builder
	var items []map[string]string
	for {
		tok, err := d.Token()
		if err != nil {
			return "", nil, false, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			text.Write(t)
		case xml.StartElement:
			item := map[string]string{}
			for {
				leaf, err := nextStart(d)
				if err != nil {
					break
				}
				v, _, leafNil, err := readNode(d, leaf)
				if err != nil {
					return "", nil, false, err
				}
				if !leafNil {
					item[leaf.Name.Local] = v
				}
			}
			items = append(items, item)
		case xml.EndElement:
			return text.String(), items, isNil, nil
		}
	}
}
