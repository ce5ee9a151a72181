package xsdcheck

import (
	"errors"
	"strings"
	"testing"
)

func load(t *testing.T) *Set {
	t.Helper()
	s, err := Load("../../wsdl/cartera.wsdl", "../../wsdl/central.wsdl")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const (
	dcns = "http://schemas.datacontract.org/2004/07/CreditSystem.Cartera.Modelos"
	xsi  = `xmlns:i="http://www.w3.org/2001/XMLSchema-instance"`
)

func envelope(body string) string {
	return `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>` + body + `</s:Body></s:Envelope>`
}

// pagoRequest is a GrabarPagoTarjeta request as the client writes it, with dFechaPago fecha.
func pagoRequest(fecha string) string {
	m := func(name, v string) string { return `<` + name + ` xmlns="` + dcns + `">` + v + `</` + name + `>` }
	return envelope(`<GrabarPagoTarjeta xmlns="http://tempuri.org/"><oSolicitud>` +
		m("cCodigoEmpresa", "000598") + m("cNumeroTarjeta", "0912345678") + m("cTerminal", "TERMINAL01") + m("cUsuario", "SOAPUSER") +
		m("dFechaPago", fecha) +
		`<iFormaPagoVm xmlns="` + dcns + `"><FormaPagoVm>` + m("cCodigo", "001") + m("nValor", "1.00") + `</FormaPagoVm></iFormaPagoVm>` +
		m("nValorPago", "1.00") + `</oSolicitud></GrabarPagoTarjeta>`)
}

// deudaError is a ConsultarDeudaTarjeta business error as WCF writes it, with extra members
// after nNumeroError.
func deudaError(extra string) string {
	return envelope(`<ConsultarDeudaTarjetaResponse xmlns="http://tempuri.org/"><ConsultarDeudaTarjetaResult xmlns:a="` + dcns + `" ` + xsi + `>` +
		`<a:cNombreCliente i:nil="true"/><a:cTextoError>Transacción rechazada</a:cTextoError><a:dFechaProximoPago i:nil="true"/>` +
		`<a:lError>true</a:lError><a:nNumeroError>99</a:nNumeroError>` + extra +
		`</ConsultarDeudaTarjetaResult></ConsultarDeudaTarjetaResponse>`)
}

func problems(t *testing.T, err error) []Problem {
	t.Helper()
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	return e.Problems
}

// The two defects an independent SOAP stack found, against the real WSDLs: a date-only
// dFechaPago (an xs:dateTime) and xsi:nil on a member the schema does not declare nillable.
func TestFindsTheWireDefects(t *testing.T) {
	s := load(t)
	t.Run("date-only dFechaPago", func(t *testing.T) {
		ps := problems(t, s.ValidateEnvelope([]byte(pagoRequest("2025-03-10"))))
		if len(ps) != 1 || ps[0].Path != "/Envelope/Body/GrabarPagoTarjeta/oSolicitud/dFechaPago" || !strings.Contains(ps[0].Message, "not a valid xs:dateTime") {
			t.Fatalf("problems = %v", ps)
		}
		if err := s.ValidateEnvelope([]byte(pagoRequest("2025-03-10T00:00:00"))); err != nil {
			t.Fatalf("the fixed form is refused: %v", err)
		}
	})
	t.Run("i:nil on a non-nillable member", func(t *testing.T) {
		ps := problems(t, s.ValidateEnvelope([]byte(deudaError(`<a:nPagoContado i:nil="true"/>`))))
		if len(ps) != 1 || ps[0].Path != "/Envelope/Body/ConsultarDeudaTarjetaResponse/ConsultarDeudaTarjetaResult/nPagoContado" ||
			!strings.Contains(ps[0].Message, "does not declare nillable") {
			t.Fatalf("problems = %v", ps)
		}
		for _, ok := range []string{"", `<a:nPagoContado>0</a:nPagoContado>`} {
			if err := s.ValidateEnvelope([]byte(deudaError(ok))); err != nil {
				t.Fatalf("%q: %v", ok, err)
			}
		}
	})
}

// A schema that uses every construct of the subset.
const testSchema = `<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" targetNamespace="urn:svc">
 <wsdl:types>
  <xs:schema elementFormDefault="qualified" targetNamespace="urn:svc" xmlns:xs="http://www.w3.org/2001/XMLSchema">
   <xs:import namespace="urn:dc"/>
   <xs:element name="Op"><xs:complexType><xs:sequence>
     <xs:element minOccurs="0" name="req" nillable="true" type="q:Req" xmlns:q="urn:dc"/>
   </xs:sequence></xs:complexType></xs:element>
   <xs:element name="Loose" type="q:Loose" xmlns:q="urn:dc"/>
  </xs:schema>
  <xs:schema targetNamespace="urn:dc" elementFormDefault="qualified" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="urn:dc">
   <xs:complexType name="Req"><xs:sequence>
     <xs:element name="cCodigo" type="tns:Codigo"/>
     <xs:element minOccurs="0" name="cTexto" nillable="true" type="xs:string"/>
     <xs:element minOccurs="0" name="dFecha" type="xs:dateTime"/>
     <xs:element minOccurs="0" name="dDia" type="xs:date"/>
     <xs:element minOccurs="0" name="lFlag" type="xs:boolean"/>
     <xs:element minOccurs="0" name="nInt" type="xs:int"/>
     <xs:element minOccurs="0" name="nLong" type="xs:long"/>
     <xs:element minOccurs="0" name="nMonto" type="xs:decimal"/>
     <xs:element minOccurs="0" name="cTipo" type="tns:Tipo"/>
     <xs:element minOccurs="0" name="iItems" nillable="true" type="tns:ArrayOfItem"/>
     <xs:element minOccurs="0" name="cLocal" form="unqualified" type="xs:string"/>
     <xs:element minOccurs="0" name="oElige" type="tns:Elige"/>
   </xs:sequence></xs:complexType>
   <xs:complexType name="ArrayOfItem"><xs:sequence>
     <xs:element minOccurs="0" maxOccurs="2" name="Item" nillable="true" type="xs:string"/>
   </xs:sequence></xs:complexType>
   <xs:complexType name="Elige"><xs:choice><xs:element name="a" type="xs:string"/></xs:choice></xs:complexType>
   <xs:complexType name="Loose"><xs:sequence><xs:element name="x" type="xs:anyType"/></xs:sequence></xs:complexType>
   <xs:simpleType name="Codigo"><xs:restriction base="xs:string"><xs:maxLength value="3"/><xs:pattern value="\d+"/></xs:restriction></xs:simpleType>
   <xs:simpleType name="Tipo"><xs:restriction base="xs:string"><xs:enumeration value="A"/><xs:enumeration value="B"/></xs:restriction></xs:simpleType>
  </xs:schema>
 </wsdl:types>
</wsdl:definitions>`

func TestSubset(t *testing.T) {
	s, err := Parse([]byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	op := func(members string) string {
		return `<Op xmlns="urn:svc" xmlns:d="urn:dc" ` + xsi + `><req>` + members + `</req></Op>`
	}
	const code = `<d:cCodigo>001</d:cCodigo>`
	cases := []struct {
		name, doc string
		want      []string // a substring of each problem, in order; none for a valid document
	}{
		{"minimal", op(code), nil},
		{"every member", op(code + `<d:cTexto>x</d:cTexto><d:dFecha>2024-02-29T23:59:59.1234567+05:00</d:dFecha><d:dDia>2025-03-10Z</d:dDia>` +
			`<d:lFlag>1</d:lFlag><d:nInt> -2147483648 </d:nInt><d:nLong>9223372036854775807</d:nLong><d:nMonto>-.5</d:nMonto><d:cTipo>B</d:cTipo>` +
			`<d:iItems><d:Item>a</d:Item><d:Item i:nil="true"/></d:iItems><cLocal xmlns="">x</cLocal>`), nil},
		{"nil result", `<Op xmlns="urn:svc" ` + xsi + `><req i:nil="true"/></Op>`, nil},
		{"absent optional result", `<Op xmlns="urn:svc"/>`, nil},
		{"nil on a nillable member", op(code + `<d:cTexto i:nil="true"/><d:iItems i:nil="1"/>`), nil},
		{"nil on a non-nillable member", op(code + `<d:nInt i:nil="true"/>`), []string{"xsi:nil on nInt, which the schema does not declare nillable"}},
		{"nil false on a non-nillable member", op(code + `<d:nInt i:nil="false">1</d:nInt>`), []string{"does not declare nillable"}},
		{"nil with content", op(code + `<d:cTexto i:nil="true">x</d:cTexto>`), []string{"must be empty"}},
		{"required member missing", op(`<d:cTexto>x</d:cTexto>`), []string{"missing cCodigo"}},
		{"required member missing at the end", op(``), []string{"missing cCodigo"}},
		{"out of order", op(code + `<d:nInt>1</d:nInt><d:lFlag>true</d:lFlag>`), []string{"lFlag is out of the sequence order"}},
		{"unknown member", op(code + `<d:cOtro>x</d:cOtro>`), []string{"{urn:dc}cOtro is not a member of Req"}},
		{"member in the operation's namespace", op(`<cCodigo>001</cCodigo>`), []string{`cCodigo is in namespace "urn:svc"; Req declares it in "urn:dc"`, "missing cCodigo"}},
		{"unqualified member qualified", op(code + `<d:cLocal>x</d:cLocal>`), []string{`cLocal is in namespace "urn:dc"; Req declares it in ""`}},
		{"twice", op(code + code), []string{"cCodigo occurs more than maxOccurs=1 times"}},
		{"too many items", op(code + `<d:iItems><d:Item>a</d:Item><d:Item>b</d:Item><d:Item>c</d:Item></d:iItems>`), []string{"Item occurs more than maxOccurs=2 times"}},
		{"text in a complex type", op(code + `<d:iItems>x</d:iItems>`), []string{"character data"}},
		{"child in a simple type", op(code + `<d:cTexto><d:x/></d:cTexto>`), []string{"child element"}},
		{"undeclared attribute", op(`<d:cCodigo id="1">001</d:cCodigo>`), []string{"attribute {}id is not declared"}},
		{"xsi:type", op(`<d:cCodigo i:type="x">001</d:cCodigo>`), []string{"xsi:type is outside the subset"}},
		{"maxLength", op(`<d:cCodigo>0001</d:cCodigo>`), []string{"against xs:maxLength 3"}},
		{"pattern", op(`<d:cCodigo>0A</d:cCodigo>`), []string{"does not match the pattern of Codigo"}},
		{"enumeration", op(code + `<d:cTipo>C</d:cTipo>`), []string{"not one of the values of Tipo"}},
		{"date-only dateTime", op(code + `<d:dFecha>2025-03-10</d:dFecha>`), []string{"not a valid xs:dateTime"}},
		{"no such day", op(code + `<d:dFecha>2025-02-29T00:00:00</d:dFecha>`), []string{"no such day"}},
		{"no such hour", op(code + `<d:dFecha>2025-02-28T25:00:00</d:dFecha>`), []string{"no such time"}},
		{"year 0000", op(code + `<d:dFecha>0000-01-01T00:00:00</d:dFecha>`), []string{"year 0000"}},
		{"no such zone", op(code + `<d:dFecha>2025-01-01T00:00:00+15:00</d:dFecha>`), []string{"no such zone"}},
		{"dateTime as date", op(code + `<d:dDia>2025-03-10T00:00:00</d:dDia>`), []string{"not a valid xs:date"}},
		{"boolean", op(code + `<d:lFlag>True</d:lFlag>`), []string{"not a valid xs:boolean"}},
		{"int out of range", op(code + `<d:nInt>2147483648</d:nInt>`), []string{"out of the range of xs:int"}},
		{"long out of range", op(code + `<d:nLong>-9223372036854775809</d:nLong>`), []string{"out of the range of xs:long"}},
		{"decimal exponent", op(code + `<d:nMonto>1e+06</d:nMonto>`), []string{"not a valid xs:decimal"}},
		{"empty decimal", op(code + `<d:nMonto/>`), []string{"not a valid xs:decimal"}},
		{"construct outside the subset", op(code + `<d:oElige><d:a>x</d:a></d:oElige>`), []string{"uses xs:choice in xs:complexType, outside the subset"}},
		{"type outside the subset", `<Loose xmlns="urn:svc"><x xmlns="urn:dc"/></Loose>`, []string{"outside the subset"}},
		{"unknown root", `<Nope xmlns="urn:svc"/>`, []string{"{urn:svc}Nope is not a global element"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := problems(t, s.Validate([]byte(tc.doc)))
			if len(ps) != len(tc.want) {
				t.Fatalf("problems = %v, want %d", ps, len(tc.want))
			}
			for i, p := range ps {
				if !strings.Contains(p.Message, tc.want[i]) {
					t.Errorf("problem %d = %v, want %q", i, p, tc.want[i])
				}
			}
		})
	}
}

func TestValidateEnvelope(t *testing.T) {
	s, err := Parse([]byte(testSchema))
	if err != nil {
		t.Fatal(err)
	}
	const (
		open  = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/">`
		close = `</s:Envelope>`
		wcf   = `<faultcode xmlns:a="http://schemas.microsoft.com/net/2005/12/windowscommunicationfoundation/dispatcher">a:InternalServiceFault</faultcode>`
	)
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"operation", open + `<s:Header><x/></s:Header><s:Body><Op xmlns="urn:svc"/></s:Body>` + close, nil},
		{"WCF fault", open + `<s:Body><s:Fault>` + wcf + `<faultstring xml:lang="es-EC">Error</faultstring><detail><Any xmlns="urn:x"/></detail></s:Fault></s:Body>` + close, nil},
		{"SOAP fault code", open + `<s:Body><s:Fault><faultcode>s:Client</faultcode><faultstring>x</faultstring><faultactor>urn:a</faultactor></s:Fault></s:Body>` + close, nil},
		{"fault without faultstring", open + `<s:Body><s:Fault>` + wcf + `</s:Fault></s:Body>` + close, []string{"missing faultstring"}},
		{"fault code with an undeclared prefix", open + `<s:Body><s:Fault><faultcode>a:X</faultcode><faultstring>x</faultstring></s:Fault></s:Body>` + close, []string{"not a QName with a declared prefix"}},
		{"fault member out of order", open + `<s:Body><s:Fault><faultstring>x</faultstring>` + wcf + `</s:Fault></s:Body>` + close, []string{"missing faultcode", "faultcode is not a member"}},
		{"invalid operation", open + `<s:Body><Op xmlns="urn:svc"><x/></Op></s:Body>` + close, []string{"{urn:svc}x is not a member"}},
		{"two elements in the Body", open + `<s:Body><Op xmlns="urn:svc"/><Op xmlns="urn:svc"/></s:Body>` + close, []string{"want one element in the Body"}},
		{"no Body", open + close, []string{"want an optional Header and one Body"}},
		{"not an envelope", `<Op xmlns="urn:svc"/>`, []string{"is not a SOAP 1.1 Envelope"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := problems(t, s.ValidateEnvelope([]byte(tc.doc)))
			if len(ps) != len(tc.want) {
				t.Fatalf("problems = %v, want %d", ps, len(tc.want))
			}
			for i, p := range ps {
				if !strings.Contains(p.Message, tc.want[i]) {
					t.Errorf("problem %d = %v, want %q", i, p, tc.want[i])
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"not XML":         `<wsdl:definitions`,
		"not a WSDL":      `<html/>`,
		"missing import":  `<xs:schema targetNamespace="urn:a" xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:import namespace="urn:b"/></xs:schema>`,
		"unknown in root": `<xs:schema targetNamespace="urn:a" xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:group name="g"/></xs:schema>`,
		"bad maxOccurs":   `<xs:schema targetNamespace="urn:a" xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="e" maxOccurs="x"/></xs:schema>`,
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
