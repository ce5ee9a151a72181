// Package umsprot encodes and decodes the documents of the carrier's SPR
// (top-up protocol 7.0): a root umsprot element with version 1, holding an
// exec_req (what we send) or an exec_rsp (what the SPR answers), each carrying
// named data elements. A SOAP Fault may arrive instead of an exec_rsp.
//
// It is shared by the client (package carrier) and the fake (package
// carriertest) so that both speak exactly the same bytes.
package umsprot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Version is the value of the umsprot version attribute of protocol 7.0.
const Version = "1"

// Data is one named value of an exec_req or exec_rsp.
type Data struct {
	Name  string `xml:"name,attr"`
	Value string `xml:",chardata"`
}

// Request is an exec_req: a function call with its arguments in order.
type Request struct {
	Function string
	Data     []Data
}

// Value returns the first value of the named data element.
func (r *Request) Value(name string) (string, bool) {
	for _, d := range r.Data {
		if d.Name == name {
			return d.Value, true
		}
	}
	return "", false
}

type requestDoc struct {
	XMLName xml.Name `xml:"umsprot"`
	Version string   `xml:"version,attr"`
	Exec    execReq  `xml:"exec_req"`
}

type execReq struct {
	Function string `xml:"function,attr"`
	Data     []Data `xml:"data"`
}

// Response is an exec_rsp: the result and diagnostic attributes and the data
// elements in the order received.
type Response struct {
	Result     string
	Diagnostic string
	Data       []Data
}

type responseDoc struct {
	XMLName xml.Name `xml:"umsprot"`
	Version string   `xml:"version,attr"`
	Exec    execRsp  `xml:"exec_rsp"`
}

type execRsp struct {
	Result     string `xml:"result,attr"`
	Diagnostic string `xml:"diagnostic,attr"`
	Data       []Data `xml:"data"`
}

// Fault is a SOAP 1.1 Fault.
type Fault struct {
	Code   string `xml:"faultcode"`
	String string `xml:"faultstring"`
}

// Answer is what an SPR answer decodes to: a Fault or an exec_rsp, never both.
type Answer struct {
	Fault    *Fault
	Response *Response
}

// MarshalRequest encodes r as an indented umsprot document with an XML
// declaration. Indentation costs a few bytes and makes the stored audit copy
// readable; the SPR ignores whitespace between elements.
func MarshalRequest(r Request) ([]byte, error) {
	return marshal(requestDoc{Version: Version, Exec: execReq(r)})
}

// MarshalResponse encodes r as an umsprot document with an exec_rsp.
func MarshalResponse(r Response) ([]byte, error) {
	return marshal(responseDoc{Version: Version, Exec: execRsp(r)})
}

type envelope struct {
	XMLName xml.Name `xml:"soap:Envelope"`
	NS      string   `xml:"xmlns:soap,attr"`
	Body    struct {
		Fault struct {
			Code   string `xml:"faultcode"`
			String string `xml:"faultstring"`
		} `xml:"soap:Fault"`
	} `xml:"soap:Body"`
}

// MarshalFault encodes f as a SOAP 1.1 envelope.
func MarshalFault(f Fault) ([]byte, error) {
	var e envelope
	e.NS = "http://schemas.xmlsoap.org/soap/envelope/"
	e.Body.Fault.Code = f.Code
	e.Body.Fault.String = f.String
	return marshal(e)
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(512)
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// DecodeRequest decodes an exec_req document, as the SPR does.
func DecodeRequest(b []byte) (*Request, error) {
	var doc requestDoc
	d := newDecoder(b)
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("umsprot: %w", err)
	}
	if doc.XMLName.Local != "umsprot" {
		return nil, fmt.Errorf("umsprot: root element is %q", doc.XMLName.Local)
	}
	if doc.Version != Version {
		return nil, fmt.Errorf("umsprot: version %q, want %q", doc.Version, Version)
	}
	if doc.Exec.Function == "" {
		return nil, errors.New("umsprot: exec_req without function")
	}
	return &Request{Function: doc.Exec.Function, Data: doc.Exec.Data}, nil
}

// ErrNoAnswer means the document holds neither an exec_rsp nor a Fault.
var ErrNoAnswer = errors.New("umsprot: neither exec_rsp nor Fault in the answer")

// MaxDepth bounds element nesting in an answer. Real answers are five deep
// inside a SOAP envelope; a deeper one is refused early rather than letting
// the decoder keep a stack the size of the input.
const MaxDepth = 64

// DecodeAnswer finds the exec_rsp or the SOAP Fault in b, at any depth, so that
// an answer wrapped in a SOAP envelope decodes too. A Fault wins over anything
// else in the document, because a fault must never be read as a success; an
// exec_rsp counts only when the whole document is well formed and holds
// exactly one.
func DecodeAnswer(b []byte) (*Answer, error) {
	d := newDecoder(b)
	type frame struct {
		rsp  bool // the exec_rsp element
		data int  // index+1 into Response.Data when this is one of its data elements
	}
	var (
		stack []frame
		rsp   *Response
		// text collects the text of the data elements one after another,
		// starts[i] being where Data[i]'s begins: data elements do not nest,
		// so each one's text is contiguous. A value may come in many tokens
		// (split by comments or child elements); appending each to a string
		// would copy it all every time, a quadratic cost that an answer of
		// MaxAnswerSize turned into gigabytes.
		text   = make([]byte, 0, 256)
		starts = make([]int, 0, 8)
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("umsprot: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case t.Name.Local == "Fault":
				var f Fault
				if err := d.DecodeElement(&f, &t); err != nil {
					return nil, fmt.Errorf("umsprot: Fault: %w", err)
				}
				f.Code = strings.TrimSpace(f.Code)
				f.String = strings.TrimSpace(f.String)
				return &Answer{Fault: &f}, nil
			case t.Name.Local == "exec_rsp":
				if rsp != nil {
					return nil, errors.New("umsprot: more than one exec_rsp")
				}
				rsp = &Response{Result: attr(t, "result"), Diagnostic: attr(t, "diagnostic")}
				stack = append(stack, frame{rsp: true})
			case t.Name.Local == "data" && len(stack) > 0 && stack[len(stack)-1].rsp:
				rsp.Data = append(rsp.Data, Data{Name: attr(t, "name")})
				starts = append(starts, len(text))
				stack = append(stack, frame{data: len(rsp.Data)})
			default:
				stack = append(stack, frame{})
			}
			if len(stack) > MaxDepth {
				return nil, fmt.Errorf("umsprot: elements nested deeper than %d", MaxDepth)
			}
		case xml.CharData:
			if n := len(stack); n > 0 && stack[n-1].data > 0 {
				text = append(text, t...)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if rsp == nil {
		return nil, ErrNoAnswer
	}
	for i, start := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		rsp.Data[i].Value = string(text[start:end])
	}
	return &Answer{Response: rsp}, nil
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func newDecoder(b []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	d.CharsetReader = charsetReader
	return d
}

// charsetReader accepts ISO-8859-1, which Spanish-language back ends still
// declare, besides the UTF-8 that encoding/xml reads natively.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return input, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1":
		b, err := io.ReadAll(input)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(b)+len(b)/8)
		for _, c := range b {
			out = utf8.AppendRune(out, rune(c))
		}
		return bytes.NewReader(out), nil
	}
	return nil, fmt.Errorf("unsupported charset %q", label)
}
