package consumption

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// Migrations create the consumption records and their audit (part of credit.Migrations).
var Migrations = []storage.Migration{
	{
		Name: "20261122000200_create_consumos",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `CREATE TABLE consumos (
				id $ID,
				autorizacion_id VARCHAR(50) NOT NULL UNIQUE,
				numero_operacion VARCHAR(20),
				estado VARCHAR(30) NOT NULL,
				codigo_empresa VARCHAR(20) NOT NULL,
				identificacion VARCHAR(50) NOT NULL,
				numero_tarjeta VARCHAR(20),
				codigo_producto VARCHAR(10),
				codigo_tipo_cupo VARCHAR(10),
				codigo_tipo_operacion VARCHAR(10),
				monto $DECIMAL(18,2) NOT NULL,
				plazo INTEGER NOT NULL,
				punto_venta VARCHAR(50),
				otp VARCHAR(10),
				numero_factura VARCHAR(50),
				monto_facturado $DECIMAL(18,2),
				fecha_factura DATE,
				creditsystem_auth_response $JSON,
				creditsystem_consumo_response $JSON,
				biometria_requerida BOOLEAN NOT NULL DEFAULT FALSE,
				imagen_qr TEXT,
				source_system VARCHAR(50) NOT NULL DEFAULT 'PLATFORM',
				operacion_en_curso VARCHAR(40),
				operacion_iniciada_at $TIMESTAMP,
				resultado_desconocido BOOLEAN NOT NULL DEFAULT FALSE,
				created_at $TIMESTAMP NOT NULL,
				updated_at $TIMESTAMP NOT NULL
			)`,
				`CREATE INDEX consumos_estado_idx ON consumos (estado)`,
				// Operators look for held records: in flight for too long or with an unknown outcome.
				`CREATE INDEX consumos_operacion_en_curso_idx ON consumos (operacion_en_curso)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP TABLE consumos`)
		},
	},
	{
		Name: "20261122000210_create_consumo_intentos",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `CREATE TABLE consumo_intentos (
				id $ID,
				consumo_id BIGINT REFERENCES consumos (id),
				autorizacion_id VARCHAR(50),
				operacion VARCHAR(50) NOT NULL,
				request_id VARCHAR(100),
				solicitud $JSON NOT NULL,
				resultado VARCHAR(30) NOT NULL,
				codigo_upstream INTEGER,
				mensaje_upstream TEXT,
				respuesta $JSON,
				iniciado_at $TIMESTAMP NOT NULL,
				terminado_at $TIMESTAMP
			)`,
				`CREATE INDEX consumo_intentos_consumo_idx ON consumo_intentos (consumo_id)`,
				`CREATE INDEX consumo_intentos_autorizacion_idx ON consumo_intentos (autorizacion_id)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP TABLE consumo_intentos`)
		},
	},
	{
		// The invoice of a confirmation in flight lives on the record, so that reconciling it
		// needs nothing but the record.
		Name: "20261125000100_consumos_operacion_factura",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE consumos ADD COLUMN operacion_factura $JSON`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE consumos DROP COLUMN operacion_factura`)
		},
	},
	{
		// What reversing a granted but unrecorded authorization needs, on its attempt.
		Name: "20261125000200_consumo_intentos_tarjeta",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`ALTER TABLE consumo_intentos ADD COLUMN numero_tarjeta VARCHAR(20)`,
				`ALTER TABLE consumo_intentos ADD COLUMN identificacion VARCHAR(50)`,
				`CREATE INDEX consumo_intentos_resultado_idx ON consumo_intentos (resultado)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP INDEX consumo_intentos_resultado_idx`,
				`ALTER TABLE consumo_intentos DROP COLUMN identificacion`,
				`ALTER TABLE consumo_intentos DROP COLUMN numero_tarjeta`)
		},
	},
	{
		// The customer's OTP is kept sealed (encrypted), and only until the flow ends.
		Name: "20261125000300_consumos_otp_sellado",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE consumos ADD COLUMN otp_sellado TEXT`,
				`UPDATE consumos SET otp = NULL WHERE estado NOT IN ('AUTORIZADO', 'OTP_RECIBIDO')`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE consumos DROP COLUMN otp_sellado`)
		},
	},
	{
		// SQLite keeps every digit of an amount only as text (storage.MoneyAsText).
		Name: "20261125000400_consumos_money_as_text",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.MoneyAsText(ctx, tx, "consumos", "monto", "monto_facturado")
		},
		Down: func(context.Context, bun.Tx) error { return nil },
	},
	{
		// Every write of a record bumps its version: writes are compare-and-set on it, so that
		// the OTP and the settlement of a claimed operation need no locked read (Store.Update,
		// Store.Settle).
		Name: "20261125000500_consumos_version",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE consumos ADD COLUMN version BIGINT NOT NULL DEFAULT 0`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE consumos DROP COLUMN version`)
		},
	},
	{
		// The indexes the counts of /metrics read (Store.Unknown), without one that nothing read.
		// Held records: only the records an operation holds, by when it started, which SQLite
		// uses for the count where it read the whole table past the old index on the marker.
		// Attempts: by result and operation, so that the count of unknown authorizations does
		// not read every timed-out attempt of every operation. consumos_estado_idx had no
		// reader, and every step of a flow moved its entry. Building them reads each table once,
		// and writes to it wait meanwhile.
		Name: "20261129000100_consumos_metric_indexes",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`DROP INDEX consumos_estado_idx`,
				`DROP INDEX consumos_operacion_en_curso_idx`,
				`CREATE INDEX consumos_en_curso_idx ON consumos (operacion_iniciada_at) WHERE operacion_en_curso IS NOT NULL`,
				`DROP INDEX consumo_intentos_resultado_idx`,
				`CREATE INDEX consumo_intentos_resultado_idx ON consumo_intentos (resultado, operacion)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`DROP INDEX consumo_intentos_resultado_idx`,
				`CREATE INDEX consumo_intentos_resultado_idx ON consumo_intentos (resultado)`,
				`DROP INDEX consumos_en_curso_idx`,
				`CREATE INDEX consumos_operacion_en_curso_idx ON consumos (operacion_en_curso)`,
				`CREATE INDEX consumos_estado_idx ON consumos (estado)`)
		},
	},
	{
		// After any change of a record its version is above what it was, also after one that
		// does not write it or sets it back (an operator's UPDATE by hand): a store's copy of
		// the record (Store) is then stale by its version, and the compare-and-set on it fails.
		// A table rebuilt on SQLite (storage.MoneyAsText) loses its triggers: TestVersionTrigger
		// checks that the schema keeps this one.
		Name: "20261206000100_consumos_version_trigger",
		Up: func(ctx context.Context, tx bun.Tx) error {
			if storage.IsPostgres(tx) {
				return storage.DDL(ctx, tx, `CREATE FUNCTION consumos_version_bump() RETURNS trigger LANGUAGE plpgsql AS $body$
					BEGIN
						NEW.version := OLD.version + 1;
						RETURN NEW;
					END
				$body$`,
					`CREATE TRIGGER consumos_version_bump BEFORE UPDATE ON consumos FOR EACH ROW
					WHEN (NEW.version <= OLD.version) EXECUTE FUNCTION consumos_version_bump()`)
			}
			return storage.DDL(ctx, tx, `CREATE TRIGGER consumos_version_bump AFTER UPDATE ON consumos FOR EACH ROW
				WHEN NEW.version <= OLD.version
				BEGIN UPDATE consumos SET version = OLD.version + 1 WHERE id = NEW.id; END`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			if storage.IsPostgres(tx) {
				return storage.DDL(ctx, tx, `DROP TRIGGER consumos_version_bump ON consumos`, `DROP FUNCTION consumos_version_bump()`)
			}
			return storage.DDL(ctx, tx, `DROP TRIGGER consumos_version_bump`)
		},
	},
	{
		// Fewer index entries per attempt (each one a page more in SQLite's WAL at the commit, an
		// entry more for PostgreSQL): no index by record (nothing reads attempts by consumo_id,
		// and records are never deleted, so the foreign key needs none), and each other index
		// holds only the attempts its readers ask for: those with an authorization id (the
		// authorization's own attempt has none until its answer) and those that did not end "ok"
		// (an attempt that ends well leaves that index instead of moving in it). A partial index
		// serves a query whose conditions include its own, and SQLite looks for the very term:
		// Store.Unknown and Store.NoRegistradas say resultado <> 'ok' (TestIntentosReadTheirIndex,
		// TestUnknownCountsReadTheirIndexes). Building the two reads the table twice, and its reads
		// and writes wait meanwhile (on PostgreSQL DROP INDEX locks the table until the commit).
		Name: "20261206000200_consumo_intentos_lean_indexes",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`DROP INDEX consumo_intentos_consumo_idx`,
				`DROP INDEX consumo_intentos_autorizacion_idx`,
				`CREATE INDEX consumo_intentos_autorizacion_idx ON consumo_intentos (autorizacion_id) WHERE autorizacion_id IS NOT NULL`,
				`DROP INDEX consumo_intentos_resultado_idx`,
				`CREATE INDEX consumo_intentos_resultado_idx ON consumo_intentos (resultado, operacion) WHERE resultado <> 'ok'`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`DROP INDEX consumo_intentos_resultado_idx`,
				`CREATE INDEX consumo_intentos_resultado_idx ON consumo_intentos (resultado, operacion)`,
				`DROP INDEX consumo_intentos_autorizacion_idx`,
				`CREATE INDEX consumo_intentos_autorizacion_idx ON consumo_intentos (autorizacion_id)`,
				`CREATE INDEX consumo_intentos_consumo_idx ON consumo_intentos (consumo_id)`)
		},
	},
}
