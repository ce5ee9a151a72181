package payments

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// Migrations create the payment ledger and its ERP hand-overs (part of credit.Migrations).
var Migrations = []storage.Migration{
	{
		Name: "20261125000500_create_pagos",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `CREATE TABLE pagos (
				id $ID,
				numero_tarjeta VARCHAR(20) NOT NULL,
				numero_operacion BIGINT UNIQUE,
				estado VARCHAR(20) NOT NULL,
				valor_pago $DECIMAL(18,2) NOT NULL,
				fecha_pago VARCHAR(10) NOT NULL,
				formas_pago $JSON NOT NULL,
				facturas_afectadas $JSON,
				rubros_aplicados $JSON,
				cupos $JSON,
				pago_contado_antes $DECIMAL(18,2),
				codigo_upstream INTEGER,
				mensaje_upstream TEXT,
				solicitado_por VARCHAR(200),
				request_id VARCHAR(100),
				motivo_reverso VARCHAR(250),
				facturas_revertidas $JSON,
				rubros_revertidos $JSON,
				reverso_solicitado_por VARCHAR(200),
				reverso_request_id VARCHAR(100),
				pago_contado_antes_reverso $DECIMAL(18,2),
				operacion_en_curso VARCHAR(40),
				operacion_iniciada_at $TIMESTAMP,
				resultado_desconocido BOOLEAN NOT NULL DEFAULT FALSE,
				conciliacion $JSON,
				created_at $TIMESTAMP NOT NULL,
				updated_at $TIMESTAMP NOT NULL,
				aplicado_at $TIMESTAMP,
				reversado_at $TIMESTAMP
			)`,
				`CREATE INDEX pagos_numero_tarjeta_idx ON pagos (numero_tarjeta, id)`,
				// At most one open record per card: a payment in flight or with an unknown
				// outcome, or a reversal in flight or with an unknown outcome. A second one is
				// refused by the database, whatever the number of instances.
				`CREATE UNIQUE INDEX pagos_tarjeta_abierta ON pagos (numero_tarjeta)
					WHERE estado IN ('PENDIENTE', 'DESCONOCIDO') OR operacion_en_curso IS NOT NULL`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP TABLE pagos`)
		},
	},
	{
		Name: "20261125000510_create_pago_entregas",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `CREATE TABLE pago_entregas (
				id $ID,
				pago_id BIGINT NOT NULL REFERENCES pagos (id),
				evento VARCHAR(10) NOT NULL,
				estado VARCHAR(20) NOT NULL,
				intentos INTEGER NOT NULL DEFAULT 0,
				ultimo_error TEXT,
				numero_documento VARCHAR(100),
				respuesta $JSON,
				created_at $TIMESTAMP NOT NULL,
				updated_at $TIMESTAMP NOT NULL,
				entregado_at $TIMESTAMP,
				UNIQUE (pago_id, evento)
			)`,
				`CREATE INDEX pago_entregas_estado_idx ON pago_entregas (estado)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP TABLE pago_entregas`)
		},
	},
}
