package payments

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage"
)

// Store persists the ledger with bun on SQLite or PostgreSQL (schema: Migrations) and enqueues
// the ERP hand-overs through internal/jobs. It owns the transactions: every method is one, and a
// change is a closure run on the record as it is now, with the row locked (FOR UPDATE on
// PostgreSQL; SQLite's write transaction holds the database). No transaction is held across an
// upstream call.
type Store struct {
	db    *bun.DB
	queue *jobs.Queue
}

// NewStore returns a store on db (migrated with credit.Migrations and jobs.Migrate) that
// enqueues hand-overs on queue (an insert-only queue is enough).
func NewStore(db *bun.DB, queue *jobs.Queue) *Store { return &Store{db: db, queue: queue} }

// openCard is the unique index that allows one open record per card (see Migrations).
var openCard = storage.Unique{Name: "pagos_tarjeta_abierta", Table: "pagos", Columns: []string{"numero_tarjeta"}}

// Open inserts a payment that holds its card (PENDIENTE). When the card is held already, the
// error is a *ConflictError naming the record that holds it (outcome unknown when it waits for
// a debt query, judged with staleBefore).
func (s *Store) Open(ctx context.Context, p *Pago, staleBefore time.Time) error {
	err := storage.InsertBoundID(ctx, s.db, p, &p.ID)
	if openCard.Violated(err) {
		return s.conflict(ctx, p.NumeroTarjeta, staleBefore)
	}
	if err != nil {
		return fmt.Errorf("payments: record payment of card %s: %w", p.NumeroTarjeta, err)
	}
	return nil
}

// conflict builds the *ConflictError of the record that holds card.
func (s *Store) conflict(ctx context.Context, card string, staleBefore time.Time) error {
	open, err := s.Abiertos(ctx, card)
	if err != nil {
		return err
	}
	if len(open) == 0 {
		// Released meanwhile: the caller may try again.
		return &ConflictError{Pago: &Pago{NumeroTarjeta: card}}
	}
	return &ConflictError{Pago: &open[0], Desconocido: open[0].Desconocido(staleBefore)}
}

// Abiertos returns the records that hold card (at most one).
func (s *Store) Abiertos(ctx context.Context, card string) ([]Pago, error) {
	var out []Pago
	err := s.db.NewSelect().Model(&out).Where("numero_tarjeta = ?", card).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("estado IN (?)", bun.In([]Estado{EstadoPendiente, EstadoDesconocido})).WhereOr("operacion_en_curso IS NOT NULL")
		}).Order("id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("payments: open records of card %s: %w", card, err)
	}
	return out, nil
}

// Discard deletes a payment that was never sent (PENDIENTE without the debt reading that
// precedes the call): a refused request leaves nothing behind.
func (s *Store) Discard(ctx context.Context, id int64) error {
	_, err := s.db.NewDelete().Model((*Pago)(nil)).Where("id = ?", id).
		Where("estado = ?", EstadoPendiente).Where("pago_contado_antes IS NULL").Exec(ctx)
	if err != nil {
		return fmt.Errorf("payments: discard payment %d: %w", id, err)
	}
	return nil
}

// Change is what a closure of Update decided: Save writes the record; HandOver, when set, is the
// ERP hand-over (EventoPago or EventoReverso) created and enqueued in the same transaction;
// HandOverBlocked records one that cannot be sent (why) for a person to finish.
type Change struct {
	Save            bool
	HandOver        string
	HandOverBlocked string
}

// Update changes a payment in one transaction: fn decides on the record as it is now. The
// record is written whole when fn says so; an error from fn aborts and is returned as it is. A
// change that would leave a second open record for the card is a *ConflictError.
func (s *Store) Update(ctx context.Context, id int64, staleBefore time.Time, fn func(*Pago) (Change, error)) (*Pago, error) {
	return s.update(ctx, "id = ?", id, staleBefore, fn)
}

// UpdateByNumeroOperacion is Update on the payment with the creditsystem's operation number; an
// unknown one is a *NotFoundError.
func (s *Store) UpdateByNumeroOperacion(ctx context.Context, n int64, staleBefore time.Time, fn func(*Pago) (Change, error)) (*Pago, error) {
	return s.update(ctx, "numero_operacion = ?", n, staleBefore, fn)
}

func (s *Store) update(ctx context.Context, where string, key int64, staleBefore time.Time, fn func(*Pago) (Change, error)) (*Pago, error) {
	var out *Pago
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		p := new(Pago)
		q := tx.NewSelect().Model(p).Where(where, key)
		if storage.IsPostgres(tx) {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); errors.Is(err, sql.ErrNoRows) {
			return &NotFoundError{NumeroOperacion: key}
		} else if err != nil {
			return fmt.Errorf("payments: load payment: %w", err)
		}
		ch, err := fn(p)
		if err != nil {
			return err
		}
		if ch.Save {
			if _, err := tx.NewUpdate().Model(p).ExcludeColumn("id", "created_at").WherePK().Exec(ctx); err != nil {
				if openCard.Violated(err) {
					return errCardHeld
				}
				return fmt.Errorf("payments: update payment %d: %w", p.ID, err)
			}
		}
		if ch.HandOver != "" || ch.HandOverBlocked != "" {
			if err := s.insertEntrega(ctx, tx, p, ch); err != nil {
				return err
			}
		}
		out = p
		return nil
	})
	if errors.Is(err, errCardHeld) {
		var card string
		if err := s.db.NewSelect().Model((*Pago)(nil)).Column("numero_tarjeta").Where(where, key).Scan(ctx, &card); err != nil {
			return nil, fmt.Errorf("payments: load payment: %w", err)
		}
		return nil, s.conflict(ctx, card, staleBefore)
	}
	return out, err
}

// errCardHeld: the update would open a second record of the card.
var errCardHeld = errors.New("payments: card held by another record")

func (s *Store) insertEntrega(ctx context.Context, tx bun.Tx, p *Pago, ch Change) error {
	now := p.UpdatedAt
	e := &Entrega{PagoID: p.ID, Evento: ch.HandOver, Estado: EntregaPendiente, CreatedAt: now, UpdatedAt: now}
	if ch.HandOverBlocked != "" {
		e.Evento, e.Estado, e.UltimoError = EventoPago, EntregaFallida, ch.HandOverBlocked
	}
	if err := storage.InsertBoundID(ctx, tx, e, &e.ID); err != nil {
		return fmt.Errorf("payments: record the ERP hand-over of payment %d: %w", p.ID, err)
	}
	if e.Estado != EntregaPendiente {
		return nil // nothing to send: a person finishes it
	}
	return s.queue.InsertTx(ctx, tx, HandOverArgs{EntregaID: e.ID}, nil)
}

// ByNumeroOperacion returns the payment with the creditsystem's operation number.
func (s *Store) ByNumeroOperacion(ctx context.Context, n int64) (*Pago, error) {
	p := new(Pago)
	err := s.db.NewSelect().Model(p).Where("numero_operacion = ?", n).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NotFoundError{NumeroOperacion: n}
	}
	if err != nil {
		return nil, fmt.Errorf("payments: load payment %d: %w", n, err)
	}
	return p, nil
}

// List returns a page of the ledger, newest first, and the number of records that match.
func (s *Store) List(ctx context.Context, q ListQuery) ([]Pago, int, error) {
	filter := func(sel *bun.SelectQuery) *bun.SelectQuery {
		if q.NumeroTarjeta != "" {
			sel = sel.Where("numero_tarjeta = ?", q.NumeroTarjeta)
		}
		return sel
	}
	total, err := filter(storage.Reader(s.db).NewSelect().Model((*Pago)(nil))).Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("payments: count payments: %w", err)
	}
	out := []Pago{}
	if q.Page <= (total+q.PerPage-1)/q.PerPage {
		if err := filter(storage.Reader(s.db).NewSelect().Model(&out)).OrderExpr("id DESC").
			Limit(q.PerPage).Offset((q.Page - 1) * q.PerPage).Scan(ctx); err != nil {
			return nil, 0, fmt.Errorf("payments: list payments: %w", err)
		}
	}
	return out, total, nil
}

// Entregas returns the ERP hand-overs of the payments ids, by payment.
func (s *Store) Entregas(ctx context.Context, ids ...int64) (map[int64][]Entrega, error) {
	out := map[int64][]Entrega{}
	if len(ids) == 0 {
		return out, nil
	}
	var list []Entrega
	if err := s.db.NewSelect().Model(&list).Where("pago_id IN (?)", bun.In(ids)).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("payments: load ERP hand-overs: %w", err)
	}
	for _, e := range list {
		out[e.PagoID] = append(out[e.PagoID], e)
	}
	return out, nil
}

// Entrega returns one ERP hand-over with its payment.
func (s *Store) Entrega(ctx context.Context, id int64) (*Entrega, *Pago, error) {
	e, p := new(Entrega), new(Pago)
	if err := s.db.NewSelect().Model(e).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, nil, fmt.Errorf("payments: load ERP hand-over %d: %w", id, err)
	}
	if err := s.db.NewSelect().Model(p).Where("id = ?", e.PagoID).Scan(ctx); err != nil {
		return nil, nil, fmt.Errorf("payments: load payment %d: %w", e.PagoID, err)
	}
	return e, p, nil
}

// UpdateEntrega writes what an attempt of a hand-over gave, unless it was delivered already.
func (s *Store) UpdateEntrega(ctx context.Context, e *Entrega) error {
	_, err := s.db.NewUpdate().Model(e).ExcludeColumn("id", "pago_id", "evento", "created_at").WherePK().
		Where("estado <> ?", EntregaEntregada).Exec(ctx)
	if err != nil {
		return fmt.Errorf("payments: update ERP hand-over %d: %w", e.ID, err)
	}
	return nil
}

// ChangeEntrega changes a hand-over in one transaction: fn decides on it (and its payment) as
// they are now, and may ask for a new job, inserted in the same transaction.
func (s *Store) ChangeEntrega(ctx context.Context, id int64, fn func(*Entrega, *Pago) (enqueue bool, err error)) (*Entrega, error) {
	var out *Entrega
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		e, p := new(Entrega), new(Pago)
		q := tx.NewSelect().Model(e).Where("id = ?", id)
		if storage.IsPostgres(tx) {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: ERP hand-over %d", ErrEntregaNotFound, id)
		} else if err != nil {
			return fmt.Errorf("payments: load ERP hand-over %d: %w", id, err)
		}
		if err := tx.NewSelect().Model(p).Where("id = ?", e.PagoID).Scan(ctx); err != nil {
			return fmt.Errorf("payments: load payment %d: %w", e.PagoID, err)
		}
		enqueue, err := fn(e, p)
		if err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model(e).ExcludeColumn("id", "pago_id", "evento", "created_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("payments: update ERP hand-over %d: %w", id, err)
		}
		if enqueue {
			if err := s.queue.InsertTx(ctx, tx, HandOverArgs{EntregaID: e.ID}, nil); err != nil {
				return err
			}
		}
		out = e
		return nil
	})
	return out, err
}

// Pendientes counts what needs attention: payments and reversals whose outcome is unknown
// (judged with staleBefore), and ERP hand-overs that are failing or were given up.
func (s *Store) Pendientes(ctx context.Context, staleBefore time.Time) (unknown, handOvers int, err error) {
	var open []Pago
	if err := storage.Reader(s.db).NewSelect().Model(&open).
		Where("estado IN (?)", bun.In([]Estado{EstadoPendiente, EstadoDesconocido})).WhereOr("operacion_en_curso IS NOT NULL").
		Scan(ctx); err != nil {
		return 0, 0, fmt.Errorf("payments: count unknown outcomes: %w", err)
	}
	for i := range open {
		if open[i].Desconocido(staleBefore) {
			unknown++
		}
	}
	handOvers, err = storage.Reader(s.db).NewSelect().Model((*Entrega)(nil)).
		Where("estado IN (?)", bun.In([]string{EntregaFallando, EntregaFallida})).Count(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("payments: count ERP hand-overs: %w", err)
	}
	return unknown, handOvers, nil
}
