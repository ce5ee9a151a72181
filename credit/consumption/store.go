package consumption

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
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
	ResultadoNoEnviado  Resultado = "not_sent"  // the request's deadline passed before the call

	// Written by Service.Reconciliar: an operator settled a held operation.
	ResultadoConciliadoAplicada   Resultado = "reconciled_applied"
	ResultadoConciliadoNoAplicada Resultado = "reconciled_not_applied"

	// A GrabarAutorizacion the creditsystem granted whose record could not be stored, and what
	// Service.ReversarNoRegistradas did about it: reversing (claimed by a pass), reversed,
	// or left to an operator (the reversal was refused, or its outcome is unknown).
	ResultadoNoRegistrada       Resultado = "granted_unrecorded"
	ResultadoRevirtiendo        Resultado = "reversing"
	ResultadoRevertida          Resultado = "granted_reversed"
	ResultadoReversoRechazado   Resultado = "reversal_rejected"
	ResultadoReversoDesconocido Resultado = "reversal_unknown"

	// Written by Service.Atender: an operator settled by hand an attempt that needed a person.
	ResultadoAtendido Resultado = "settled"
)

// Intento is the audit of one upstream call of the consumption module that creates or moves an
// authorization (GrabarAutorizacion, GrabarConsumo, GrabarReversoAutorizacion,
// GrabarReversoConsumo). Solicitud summarises the request without secrets: an OTP is recorded
// only as its kind ("registered", "none", "bypass"), never as its value.
type Intento struct {
	bun.BaseModel `bun:"table:consumo_intentos"`

	ID             int64  `bun:"id,pk,autoincrement"`
	ConsumoID      int64  `bun:"consumo_id,nullzero"`
	AutorizacionID string `bun:"autorizacion_id,nullzero"`
	Operacion      string `bun:"operacion,notnull"`
	RequestID      string `bun:"request_id,nullzero"`
	// NumeroTarjeta and Identificacion of a GrabarAutorizacion attempt: what reversing it needs
	// when the authorization was granted but not recorded.
	NumeroTarjeta   string          `bun:"numero_tarjeta,nullzero"`
	Identificacion  string          `bun:"identificacion,nullzero"`
	Solicitud       json.RawMessage `bun:"solicitud,notnull"`
	Resultado       Resultado       `bun:"resultado,notnull"`
	CodigoUpstream  *int            `bun:"codigo_upstream"`
	MensajeUpstream string          `bun:"mensaje_upstream,nullzero"`
	Respuesta       json.RawMessage `bun:"respuesta"`
	IniciadoAt      time.Time       `bun:"iniciado_at,notnull"`
	TerminadoAt     time.Time       `bun:"terminado_at,nullzero"`
}

// Store persists consumption records and their audit with bun on SQLite or PostgreSQL (schema:
// Migrations). It owns the transactions and the columns: every change of a record is a closure
// that decides on the record, and only a decision on the record as it is when written is
// committed: inside one short transaction that locks the row (FOR UPDATE on PostgreSQL; SQLite's
// write transaction takes the database lock at BEGIN), or, where the record is written by
// compare-and-set on its version instead (Update; Claim and Settle on PostgreSQL), by that
// compare-and-set, the row lock taken only when the record moved. No transaction is held across
// an upstream call.
//
// A store keeps the last records it wrote as it wrote them, and Update and Claim (on PostgreSQL)
// start from that copy instead of reading the record again: the next step of a flow (the OTP,
// the confirmation) costs one round trip, not two. The copy is only a guess: the write is a
// compare-and-set on its version, and a change of a row never leaves its version where it was
// (a trigger bumps it for a write that does not, such as an operator's UPDATE by hand), so a copy
// that another process or a person made stale fails the write, and the change runs again on the
// record as read. A change that the copy refuses, or that changes nothing on it, is decided again
// on the record as read, so that no answer comes from a stale copy. The closures must therefore
// have no effect but on their argument.
type Store struct {
	db     *bun.DB
	recent *lru.Cache[string, Consumo] // by authorization id
}

// recentRecords bounds the records a store keeps as it wrote them: each holds the upstream
// answers and the QR image (tens of KB at most), and a flow's steps follow each other within
// minutes.
const recentRecords = 256

// NewStore returns a store on db, whose schema must be migrated (credit.Migrations).
func NewStore(db *bun.DB) *Store {
	recent, err := lru.New[string, Consumo](recentRecords)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &Store{db: db, recent: recent}
}

// remember keeps c as it was just written; forget drops the copy of a record whose write failed.
func (s *Store) remember(c *Consumo) { s.recent.Add(c.AutorizacionID, c.clone()) }

func (s *Store) forget(autorizacionID string) { s.recent.Remove(autorizacionID) }

// recalled returns a copy of the record as this store last wrote it.
func (s *Store) recalled(autorizacionID string) (*Consumo, bool) {
	c, ok := s.recent.Get(autorizacionID)
	if !ok {
		return nil, false
	}
	c = c.clone()
	return &c, true
}

// ByAutorizacion returns the record of an authorization id, or an *AutorizacionNotFoundError.
func (s *Store) ByAutorizacion(ctx context.Context, autorizacionID string) (*Consumo, error) {
	return byAutorizacion(ctx, s.db, autorizacionID, false)
}

func byAutorizacion(ctx context.Context, db bun.IDB, autorizacionID string, forUpdate bool) (*Consumo, error) {
	c := new(Consumo)
	var args storage.Args
	q := db.NewSelect().Model(c).Where("autorizacion_id = ?", bun.Safe(args.Add(autorizacionID)))
	if forUpdate && storage.IsPostgres(db) {
		q = q.For("UPDATE")
	}
	err := storage.SelectBound(ctx, db, q, args, c)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &AutorizacionNotFoundError{AutorizacionID: autorizacionID}
	}
	if err != nil {
		return nil, fmt.Errorf("consumption: load authorization %s: %w", autorizacionID, err)
	}
	return c, nil
}

// Intentos lists the audited attempts of an authorization, oldest first.
func (s *Store) Intentos(ctx context.Context, autorizacionID string) ([]Intento, error) {
	var out []Intento
	if err := s.db.NewSelect().Model(&out).Where("autorizacion_id = ?", autorizacionID).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("consumption: load attempts of %s: %w", autorizacionID, err)
	}
	return out, nil
}

// StartIntento records the pending audit of a call that has no record yet (GrabarAutorizacion),
// before the call.
func (s *Store) StartIntento(ctx context.Context, in *Intento) error {
	return storage.Write(ctx, s.db, func(ctx context.Context, db bun.IDB) error { return insertIntento(ctx, db, in) })
}

// FinishIntento writes the outcome of an attempt that changed no record.
func (s *Store) FinishIntento(ctx context.Context, in *Intento) error {
	return storage.Write(ctx, s.db, func(ctx context.Context, db bun.IDB) error { return finishIntento(ctx, db, in) })
}

// uniqueAutorizacion is the unique autorizacion_id of consumos (see Migrations).
var uniqueAutorizacion = storage.Unique{Name: "consumos_autorizacion_id_key", Table: "consumos", Columns: []string{"autorizacion_id"}}

// errYaRegistrada: a record with the authorization's id exists already (the creditsystem named
// an id twice).
var errYaRegistrada = errors.New("consumption: an authorization with this id is already recorded")

// InsertAutorizado stores the record of a granted authorization and completes its attempt, in
// one transaction.
//
// On PostgreSQL both writes are one statement (a data-modifying WITH), one round trip instead
// of four with BEGIN and COMMIT; on SQLite they are one transaction of the commit group.
func (s *Store) InsertAutorizado(ctx context.Context, c *Consumo, in *Intento) error {
	in.AutorizacionID = c.AutorizacionID
	if storage.IsPostgres(s.db) {
		var args storage.Args
		ins, err := storage.BoundInsert(s.db, c, &args)
		if err != nil {
			return err
		}
		set, err := storage.BoundSet(s.db, in, &args, intentoOutcome[1:]...)
		if err != nil {
			return err
		}
		q := "WITH c AS (" + ins + " RETURNING id), u AS (UPDATE consumo_intentos SET consumo_id = (SELECT id FROM c), " +
			set + " WHERE id = " + args.Add(in.ID) + ") SELECT id FROM c"
		if err := storage.ScanBound(ctx, s.db, q, args, &c.ID); err != nil {
			return insertAutorizadoError(c, err)
		}
		in.ConsumoID = c.ID
		s.remember(c)
		return nil
	}
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if err := storage.InsertBoundID(ctx, tx, c, &c.ID); err != nil {
			return insertAutorizadoError(c, err)
		}
		in.ConsumoID = c.ID
		return finishIntento(ctx, tx, in)
	})
	s.settled(c.AutorizacionID, c, err)
	return err
}

func insertAutorizadoError(c *Consumo, err error) error {
	if uniqueAutorizacion.Violated(err) {
		return fmt.Errorf("%w: %s", errYaRegistrada, c.AutorizacionID)
	}
	return fmt.Errorf("consumption: store authorization %s: %w", c.AutorizacionID, err)
}

// Update changes the record of an authorization: fn decides on the record and changes it in
// place (a transition); an error from fn aborts and is returned as it is. The record (the
// store's copy, or read without a lock) is written by compare-and-set on its version; when
// another write came first, it is read again and fn runs again (fn must only change its
// argument).
func (s *Store) Update(ctx context.Context, autorizacionID string, fn func(*Consumo) error) (*Consumo, error) {
	c, recalled := s.recalled(autorizacionID)
	for reads := 0; reads < maxOptimistic; {
		if !recalled {
			var err error
			if c, err = byAutorizacion(ctx, s.db, autorizacionID, false); err != nil {
				return nil, err
			}
			reads++
		}
		snap := storage.TakeSnapshot(s.db, c)
		prev := c.Version
		if err := fn(c); err != nil {
			if recalled {
				recalled = false // refused by the copy: decided again on the record as stored
				continue
			}
			return nil, err
		}
		err := storage.Write(ctx, s.db, func(ctx context.Context, db bun.IDB) error { return save(ctx, db, prev, c, snap) })
		if err == nil && recalled && c.Version == prev {
			// Nothing was written, so nothing checked the copy: decided again on the record
			// as stored.
			recalled = false
			continue
		}
		recalled = false
		s.settled(autorizacionID, c, err)
		if !errors.Is(err, storage.ErrStale) {
			return c, err
		}
	}
	return nil, fmt.Errorf("%w: authorization %s kept changing", ErrInFlight, autorizacionID)
}

// maxOptimistic bounds Update's attempts under concurrent writes of one record.
const maxOptimistic = 5

// Claim is an upstream operation that holds a record: the record as claimed, and its pending
// attempt.
type Claim struct {
	Consumo *Consumo
	Intento *Intento
	// marker is the operation holding the record (Consumo.OperacionEnCurso at claim time).
	marker string
}

// Claim commits, in one transaction, the in-flight marker that fn sets on the record as it is
// now (Consumo.IniciarOperacion) and the pending attempt fn returns, before the upstream call.
// Only one request can claim a record: another one meets the marker (ErrInFlight) or the state
// the winner left (a *StateError), as fn decides.
//
// On PostgreSQL fn decides on the store's copy of the record, or else on the record read
// without a lock, and the marker and the attempt are one statement (claimInOne): the marker's
// compare-and-set on that version, the attempt inserted from its RETURNING, committed by itself
// before the call. When the copy is stale or refused, the claim runs again on the record as
// read; when the record moved since it was read (another claim won, an OTP), nothing is written
// and the claim runs again as below, locked, fn deciding on the record as it is then. SQLite
// keeps the locked transaction (group-committed).
func (s *Store) Claim(ctx context.Context, autorizacionID string, fn func(*Consumo) (*Intento, error)) (*Claim, error) {
	if storage.IsPostgres(s.db) {
		for _, recall := range []bool{true, false} {
			cl, err := s.claimInOne(ctx, autorizacionID, fn, recall)
			if !errors.Is(err, storage.ErrStale) {
				return cl, err
			}
		}
	}
	var cl *Claim
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		c, err := byAutorizacion(ctx, tx, autorizacionID, true)
		if err != nil {
			return err
		}
		snap, prev := storage.TakeSnapshot(tx, c), c.Version
		in, err := fn(c)
		if err != nil {
			return err
		}
		if err := save(ctx, tx, prev, c, snap); err != nil {
			return err
		}
		in.ConsumoID, in.AutorizacionID = c.ID, c.AutorizacionID
		if err := insertIntento(ctx, tx, in); err != nil {
			return err
		}
		cl = newClaim(c, in)
		return nil
	})
	if err != nil {
		s.forget(autorizacionID)
	} else {
		s.remember(cl.Consumo)
	}
	return cl, err
}

// claimInOne is Claim on PostgreSQL without a lock: the record read as it is (with recall, the
// store's copy: storage.ErrStale when there is none or fn refuses it), fn deciding on it (its
// error returned as it is), and the write one statement, a data-modifying WITH whose insert
// takes its row from the update's:
//
//	WITH u AS (UPDATE consumos SET ... WHERE id = ? AND version = ? RETURNING id),
//	     i AS (INSERT INTO consumo_intentos (...) SELECT ... FROM u RETURNING id)
//	SELECT (SELECT id FROM i) FROM u
//
// One round trip from the copy, two from a read, instead of five (BEGIN, the locked read, two
// statements, COMMIT). Of two
// claims on the same version only one update matches (the other waits for its row lock, then
// finds the next version); the other writes nothing and gets storage.ErrStale, as does a claim
// whose record moved or whose fn changed no column: Claim then takes the locked path.
func (s *Store) claimInOne(ctx context.Context, autorizacionID string, fn func(*Consumo) (*Intento, error), recall bool) (*Claim, error) {
	var c *Consumo
	if recall {
		var ok bool
		if c, ok = s.recalled(autorizacionID); !ok {
			return nil, storage.ErrStale
		}
	} else {
		var err error
		if c, err = byAutorizacion(ctx, s.db, autorizacionID, false); err != nil {
			return nil, err
		}
	}
	snap, prev := storage.TakeSnapshot(s.db, c), c.Version
	in, err := fn(c)
	if err != nil {
		if recall {
			return nil, storage.ErrStale // decided again on the record as stored
		}
		return nil, err
	}
	var args storage.Args
	upd, err := snap.BoundUpdate(s.db, c, prev, &args)
	if err != nil || upd == "" {
		return nil, cmp.Or(err, storage.ErrStale)
	}
	in.ConsumoID, in.AutorizacionID = c.ID, c.AutorizacionID
	ins, err := storage.BoundInsertFrom(s.db, in, "u", &args)
	if err != nil {
		return nil, err
	}
	err = storage.ScanBound(ctx, s.db, "WITH u AS ("+upd+" RETURNING id), i AS ("+ins+") SELECT (SELECT id FROM i) FROM u", args, &in.ID)
	if err != nil {
		s.forget(autorizacionID)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, storage.ErrStale
	}
	if err != nil {
		return nil, fmt.Errorf("consumption: claim authorization %s for %s: %w", autorizacionID, in.Operacion, err)
	}
	c.Version = prev + 1
	s.remember(c)
	return newClaim(c, in), nil
}

func newClaim(c *Consumo, in *Intento) *Claim {
	held := *c
	return &Claim{Consumo: &held, Intento: in, marker: c.OperacionEnCurso}
}

// Settle writes the outcome of a claimed operation in one transaction: fn changes the record as
// it is now (completes the transition, releases or flags the marker) and the claim's attempt,
// completed by the caller, is written with it. A record no longer held by the claim's operation
// (an operator reconciled it meanwhile) is ErrNotHeld and nothing is written.
//
// The record is not read again when it is still as the claim left it: fn runs on the claim's
// copy and the write is a compare-and-set on its version; only when another write came between
// (a second settlement of the claim, an operator) is it read under lock, fn running again. On
// PostgreSQL that compare-and-set and the attempt's outcome are one statement (settleInOne).
func (s *Store) Settle(ctx context.Context, cl *Claim, fn func(*Consumo) error) (*Consumo, error) {
	held := *cl.Consumo
	snap := storage.TakeSnapshot(s.db, &held)
	if fn(&held) == nil {
		one, err := s.settleInOne(ctx, cl, &held, snap)
		if !one {
			err = storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
				if err := save(ctx, tx, cl.Consumo.Version, &held, snap); err != nil {
					return err
				}
				return finishIntento(ctx, tx, cl.Intento)
			})
		}
		if !errors.Is(err, storage.ErrStale) {
			s.settled(held.AutorizacionID, &held, err)
			if err != nil {
				return nil, err
			}
			return &held, nil
		}
	}
	// fn refused the claim's copy, or the record moved: decide on the record as stored.
	var out *Consumo
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		c, err := byAutorizacion(ctx, tx, cl.Consumo.AutorizacionID, true)
		if err != nil {
			return err
		}
		if c.OperacionEnCurso != cl.marker {
			return fmt.Errorf("%w: authorization %s, %s (held by %q)", ErrNotHeld, c.AutorizacionID, cl.marker, c.OperacionEnCurso)
		}
		snap, prev := storage.TakeSnapshot(tx, c), c.Version
		if err := fn(c); err != nil {
			return err
		}
		if err := save(ctx, tx, prev, c, snap); err != nil {
			return err
		}
		if err := finishIntento(ctx, tx, cl.Intento); err != nil {
			return err
		}
		out = c
		return nil
	})
	s.settled(cl.Consumo.AutorizacionID, out, err)
	return out, err
}

// settled keeps c, just written, or forgets the record whose write failed with err.
func (s *Store) settled(autorizacionID string, c *Consumo, err error) {
	if err != nil {
		s.forget(autorizacionID)
	} else {
		s.remember(c)
	}
}

// settleInOne writes, on PostgreSQL, what Settle's transaction on the claim's copy would (the
// changed columns of held with the version compare-and-set, the attempt's outcome) as one
// statement, a data-modifying WITH whose second update runs only when the first matched:
//
//	WITH u AS (UPDATE consumos SET ... WHERE id = ? AND version = ? RETURNING id),
//	     i AS (UPDATE consumo_intentos SET ... WHERE id = ? AND EXISTS (SELECT FROM u))
//	SELECT id FROM u
//
// One round trip instead of four (BEGIN, two statements, COMMIT), atomic by itself. When the
// record moved the update matches nothing, so the attempt is not written either, and it returns
// storage.ErrStale. one is false, with nothing written, where the transaction is still needed:
// on SQLite (whose transactions share a group commit) and when no column of the record changed.
func (s *Store) settleInOne(ctx context.Context, cl *Claim, held *Consumo, snap storage.Snapshot) (one bool, err error) {
	if !storage.IsPostgres(s.db) {
		return false, nil
	}
	prev := cl.Consumo.Version
	var args storage.Args
	upd, err := snap.BoundUpdate(s.db, held, prev, &args)
	if err != nil || upd == "" {
		return err != nil, err
	}
	fin, err := storage.BoundSet(s.db, cl.Intento, &args, intentoOutcome...)
	if err != nil {
		return true, err
	}
	var id int64
	err = storage.ScanBound(ctx, s.db, "WITH u AS ("+upd+" RETURNING id), i AS (UPDATE consumo_intentos SET "+fin+
		" WHERE id = "+args.Add(cl.Intento.ID)+" AND EXISTS (SELECT FROM u)) SELECT id FROM u", args, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return true, storage.ErrStale
	}
	if err != nil {
		return true, fmt.Errorf("consumption: settle authorization %s: %w", held.AutorizacionID, err)
	}
	held.Version = prev + 1
	return true, nil
}

// Reconcile settles, in one transaction, the operation that holds a record by an operator's
// decision: fn changes the record as it is now and returns the audit of the decision.
func (s *Store) Reconcile(ctx context.Context, autorizacionID string, fn func(*Consumo) (*Intento, error)) (*Consumo, error) {
	var out *Consumo
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		c, err := byAutorizacion(ctx, tx, autorizacionID, true)
		if err != nil {
			return err
		}
		snap, prev := storage.TakeSnapshot(tx, c), c.Version
		audit, err := fn(c)
		if err != nil {
			return err
		}
		if err := save(ctx, tx, prev, c, snap); err != nil {
			return err
		}
		if err := insertIntento(ctx, tx, audit); err != nil {
			return err
		}
		out = c
		return nil
	})
	s.settled(autorizacionID, out, err)
	return out, err
}

// notOK is the condition of the partial index of attempts by result (see Migrations), which its
// readers say too.
const notOK = "resultado <> 'ok'"

// NoRegistradas lists up to limit attempts of granted authorizations that have no record
// (ResultadoNoRegistrada), oldest first.
func (s *Store) NoRegistradas(ctx context.Context, limit int) ([]Intento, error) {
	var out []Intento
	if err := s.db.NewSelect().Model(&out).Where("resultado = ?", ResultadoNoRegistrada).Where(notOK).Order("id").Limit(limit).Scan(ctx); err != nil {
		return nil, fmt.Errorf("consumption: unrecorded authorizations: %w", err)
	}
	return out, nil
}

// MoveIntento changes an attempt's result from one value to another (compare-and-set) and reports
// whether it did; with audit, the audit row is inserted in the same transaction.
func (s *Store) MoveIntento(ctx context.Context, id int64, from, to Resultado, audit *Intento) (bool, error) {
	var moved bool
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*Intento)(nil)).Set("resultado = ?", to).
			Where("id = ?", id).Where("resultado = ?", from).Exec(ctx)
		if err != nil {
			return fmt.Errorf("consumption: attempt %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		moved = true
		if audit == nil {
			return nil
		}
		return insertIntento(ctx, tx, audit)
	})
	return moved, err
}

// Intento returns the attempt id.
func (s *Store) Intento(ctx context.Context, id int64) (*Intento, error) {
	in := new(Intento)
	err := s.db.NewSelect().Model(in).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: attempt %d", ErrNothingToReconcile, id)
	}
	if err != nil {
		return nil, fmt.Errorf("consumption: attempt %d: %w", id, err)
	}
	return in, nil
}

// Unknown counts what needs a person: records held by an operation whose outcome is unknown
// (flagged, or started before staleBefore: a process that died during the call), authorization
// attempts whose outcome is unknown (a timeout or a lost connection, or a call started before
// staleBefore that never ended), and granted authorizations not yet recorded nor reversed.
func (s *Store) Unknown(ctx context.Context, staleBefore time.Time) (held, unrecorded int, err error) {
	held, err = storage.Reader(s.db).NewSelect().Model((*Consumo)(nil)).Where("operacion_en_curso IS NOT NULL").
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("resultado_desconocido").WhereOr("operacion_iniciada_at < ?", staleBefore)
		}).Count(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("consumption: count unknown outcomes: %w", err)
	}
	unrecorded, err = storage.Reader(s.db).NewSelect().Model((*Intento)(nil)).Where(notOK).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("resultado IN (?)", bun.In([]Resultado{ResultadoNoRegistrada, ResultadoRevirtiendo, ResultadoReversoRechazado, ResultadoReversoDesconocido})).
				WhereOr("operacion = ? AND resultado IN (?)", UpstreamGrabarAutorizacion, bun.In([]Resultado{ResultadoTimeout, ResultadoTransporte})).
				WhereOr("operacion = ? AND resultado = ? AND iniciado_at < ?", UpstreamGrabarAutorizacion, ResultadoPendiente, staleBefore)
		}).Count(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("consumption: count unrecorded authorizations: %w", err)
	}
	return held, unrecorded, nil
}

// save writes the columns of c that changed since it was read at version prev (snap), and the
// next version, if the stored record is still at prev (storage.ErrStale otherwise).
func save(ctx context.Context, db bun.IDB, prev int64, c *Consumo, snap storage.Snapshot) error {
	v, err := snap.Update(ctx, db, c, prev)
	c.Version = v
	if err != nil && !errors.Is(err, storage.ErrStale) {
		return fmt.Errorf("consumption: update authorization %s: %w", c.AutorizacionID, err)
	}
	return err
}

func insertIntento(ctx context.Context, db bun.IDB, in *Intento) error {
	if err := storage.InsertBoundID(ctx, db, in, &in.ID); err != nil {
		return fmt.Errorf("consumption: audit %s attempt: %w", in.Operacion, err)
	}
	return nil
}

// intentoOutcome are the columns an attempt's outcome writes (consumo_id first).
var intentoOutcome = []string{"consumo_id", "autorizacion_id", "resultado", "codigo_upstream", "mensaje_upstream", "respuesta", "terminado_at"}

func finishIntento(ctx context.Context, db bun.IDB, in *Intento) error {
	var args storage.Args
	set, err := storage.BoundSet(db, in, &args, intentoOutcome...)
	if err == nil {
		_, err = storage.ExecBound(ctx, db, "UPDATE consumo_intentos SET "+set+" WHERE id = "+args.Add(in.ID), args)
	}
	if err != nil {
		return fmt.Errorf("consumption: audit %s attempt: %w", in.Operacion, err)
	}
	return nil
}
