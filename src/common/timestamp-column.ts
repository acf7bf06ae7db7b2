import { Column } from 'typeorm';

/**
 * An entity's point in time: a `timestamptz` column named `name` (snake_case, as the migrations write it), read as a `Date`
 * (PostgreSQL keeps the instant, node-postgres gives it in this process's time zone). `nullable` for a moment that may not
 * have come yet (`completed_at`, `revoked_at`); the property is then `Date | null`. Rows' creation times set by TypeORM on
 * insert keep `@CreateDateColumn`.
 */
export function TimestampColumn(name: string, options: { nullable?: boolean } = {}): PropertyDecorator {
  return Column({ name, type: 'timestamptz', nullable: options.nullable ?? false });
}
