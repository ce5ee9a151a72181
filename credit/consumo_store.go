package credit

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// Resultado is the outcome of one upstream attempt.
type Resultado string

// Outcomes of an upstream attempt. Pendiente stays when the process stopped during the call.
const (
	ResultadoPendiente  Resultado = "pending"
	ResultadoOK         Resultado = "ok"
	ResultadoRechazado  Resultado = "rejected"  // the creditsystem answered lError = true
	ResultadoFault      Resultado = "fault"     // SOAP fault
	ResultadoTimeout    Resultado = "timeout"   // no answer within CREDITSYSTEM_TIMEOUT
	ResultadoTransporte Resultado = "transport" // connection or undecodable answer

	// Written by Consumos.Reconciliar: an operator settled a held operation.
	ResultadoConciliadoAplicada   Resultado = "reconciled_applied"
	ResultadoConciliadoNoAplicada Resultado = "reconciled_not_applied"
)

// Intento is the audit of one upstream call of the consumption module that creates or moves an
// authorization (GrabarAutorizacion, GrabarConsumo, GrabarReversoAutorizacion,
// GrabarReversoConsumo). Solicitud summarises the request without secrets: an OTP is recorded
// only as its kind ("registered", "none", "bypass"), never as its value.
type Intento struct {
	bun.BaseModel `bun:"table:consumo_intentos"`

	ID              int64           `bun:"id,pk,autoincrement"`
	ConsumoID       int64           `bun:"consumo_id,nullzero"`
	AutorizacionID  string          `bun:"autorizacion_id,nullzero"`
	Operacion       string          `bun:"operacion,notnull"`
	RequestID       string          `bun:"request_id,nullzero"`
	Solicitud       json.RawMessage `bun:"solicitud,notnull"`
	Resultado       Resultado       `bun:"resultado,notnull"`
	CodigoUpstream  *int            `bun:"codigo_upstream"`
	MensajeUpstream string          `bun:"mensaje_upstream,nullzero"`
	Respuesta       json.RawMessage `bun:"respuesta"`
	IniciadoAt      time.Time       `bun:"iniciado_at,notnull"`
	TerminadoAt     time.Time       `bun:"terminado_at,nullzero"`
}

// consumoPorAutorizacion loads the record of an authorization id.
func consumoPorAutorizacion(ctx context.Context, db bun.IDB, autorizacionID string) (*Consumo, error) {
	c := new(Consumo)
	err := db.NewSelect().Model(c).Where("autorizacion_id = ?", autorizacionID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &AutorizacionNotFoundError{AutorizacionID: autorizacionID}
	}
	if err != nil {
		return nil, fmt.Errorf("credit: load authorization %s: %w", autorizacionID, err)
	}
	return c, nil
}

func insertConsumo(ctx context.Context, db bun.IDB, c *Consumo) error {
	if _, err := db.NewInsert().Model(c).Returning("id").Exec(ctx); err != nil {
		return fmt.Errorf("credit: store authorization %s: %w", c.AutorizacionID, err)
	}
	return nil
}

// guardar writes cols of c with a compare-and-set on the state and the in-flight marker it was
// read with (prevEstado, prevOperacion), so a write based on a stale read changes nothing.
// It reports whether the row was written.
func guardar(ctx context.Context, db bun.IDB, c *Consumo, prevEstado Estado, prevOperacion string, cols ...string) (bool, error) {
	q := db.NewUpdate().Model(c).Column(append(slices.Clone(cols), "updated_at")...).WherePK().Where("estado = ?", prevEstado)
	if prevOperacion == "" {
		q = q.Where("operacion_en_curso IS NULL")
	} else {
		q = q.Where("operacion_en_curso = ?", prevOperacion)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("credit: update authorization %s: %w", c.AutorizacionID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("credit: update authorization %s: %w", c.AutorizacionID, err)
	}
	return n == 1, nil
}

var columnasMarcador = []string{"operacion_en_curso", "operacion_iniciada_at", "resultado_desconocido"}

func insertIntento(ctx context.Context, db bun.IDB, in *Intento) error {
	if _, err := db.NewInsert().Model(in).Returning("id").Exec(ctx); err != nil {
		return fmt.Errorf("credit: audit %s attempt: %w", in.Operacion, err)
	}
	return nil
}

func terminarIntento(ctx context.Context, db bun.IDB, in *Intento) error {
	_, err := db.NewUpdate().Model(in).
		Column("consumo_id", "autorizacion_id", "resultado", "codigo_upstream", "mensaje_upstream", "respuesta", "terminado_at").
		WherePK().Exec(ctx)
	if err != nil {
		return fmt.Errorf("credit: audit %s attempt: %w", in.Operacion, err)
	}
	return nil
}

// intentosDe lists the audited attempts of an authorization, oldest first.
func intentosDe(ctx context.Context, db bun.IDB, autorizacionID string) ([]Intento, error) {
	var out []Intento
	if err := db.NewSelect().Model(&out).Where("autorizacion_id = ?", autorizacionID).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("credit: load attempts of %s: %w", autorizacionID, err)
	}
	return out, nil
}
