// knex 3 (over node-postgres) against a started tallyd, a migration-and-query
// workflow: createTable with increments() (a serial primary key), string,
// integer, decimal, date and boolean columns; a multi-row insert returning the
// generated ids; a grouped query with sum, count and having; an update and a
// delete in a transaction; and reflection: hasTable, hasColumn, columnInfo.
// The expected values are what PostgreSQL 15 answers to the same calls. Run
// through tests/clients/tallyd_harness.py with NODE_PATH holding knex and pg.
'use strict';
const assert = require('assert');

// A module from NODE_PATH; missing, the test fails saying how to install it.
function requireTool(name) {
  try {
    return require(name);
  } catch (e) {
    console.error(`FAIL: ${name} is missing (scripts/setup.sh --test installs it with npm): ${e.message}`);
    process.exit(1);
  }
}
const knexFactory = requireTool('knex');

function connection() {
  return {
    host: process.env.TALLY_TEST_HOST,
    port: Number(process.env.TALLY_TEST_PORT),
    user: process.env.TALLY_TEST_TRUST_USER,
    database: process.env.TALLY_TEST_DB,
  };
}

async function main() {
  const knex = knexFactory({ client: 'pg', connection: connection(), pool: { min: 0, max: 2 } });
  try {
    await knex.schema.dropTableIfExists('knex_sales');
    await knex.schema.createTable('knex_sales', (t) => {
      t.increments('id');
      t.string('region', 40).notNullable();
      t.integer('amount');
      t.decimal('price', 10, 2);
      t.date('day');
      t.boolean('ok').defaultTo(true);
    });

    const ids = await knex('knex_sales').insert([
      { region: 'north', amount: 10, price: '1.50', day: '2024-01-01' },
      { region: 'south', amount: 20, price: '2.25', day: '2024-01-02', ok: false },
      { region: 'north', amount: 5, price: null, day: null },
      { region: 'east', amount: null, price: '9.99', day: '2024-01-03' },
    ]).returning('id');
    assert.deepStrictEqual(ids, [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }]);
    const [one] = await knex('knex_sales').insert({ region: 'south', amount: 7, price: '0.75' }, ['id', 'ok']);
    assert.deepStrictEqual(one, { id: 5, ok: true });

    const groups = await knex('knex_sales')
      .select('region')
      .sum({ total: 'amount' })
      .count({ n: '*' })
      .max({ top: 'price' })
      .groupBy('region')
      .having(knex.raw('count(*) > ?', [0]))
      .orderBy('region');
    assert.deepStrictEqual(groups, [
      { region: 'east', total: null, n: '1', top: '9.99' },
      { region: 'north', total: '15', n: '2', top: '1.50' },
      { region: 'south', total: '27', n: '2', top: '2.25' },
    ]);

    await knex.transaction(async (trx) => {
      const updated = await trx('knex_sales').where({ region: 'north' }).update({ ok: false });
      assert.strictEqual(updated, 2);
      const deleted = await trx('knex_sales').where('amount', '<', 8).del();
      assert.strictEqual(deleted, 2);
    });
    const rows = await knex('knex_sales').select('id', 'ok').whereIn('region', ['north', 'south']).orderBy('id');
    assert.deepStrictEqual(rows, [{ id: 1, ok: false }, { id: 2, ok: false }]);
    const [{ count }] = await knex('knex_sales').count('id as count').where('day', '>=', '2024-01-02');
    assert.strictEqual(count, '2');

    assert.strictEqual(await knex.schema.hasTable('knex_sales'), true);
    assert.strictEqual(await knex.schema.hasTable('no_such_table'), false);
    assert.strictEqual(await knex.schema.hasColumn('knex_sales', 'price'), true);
    assert.strictEqual(await knex.schema.hasColumn('knex_sales', 'nope'), false);
    const info = await knex('knex_sales').columnInfo();
    assert.deepStrictEqual(info, {
      id: { type: 'integer', maxLength: null, nullable: false, defaultValue: "nextval('knex_sales_id_seq'::regclass)" },
      region: { type: 'character varying', maxLength: 40, nullable: false, defaultValue: null },
      amount: { type: 'integer', maxLength: null, nullable: true, defaultValue: null },
      price: { type: 'numeric', maxLength: null, nullable: true, defaultValue: null },
      day: { type: 'date', maxLength: null, nullable: true, defaultValue: null },
      ok: { type: 'boolean', maxLength: null, nullable: true, defaultValue: 'true' },
    });

    await knex.schema.alterTable('knex_sales', (t) => { t.string('note'); });
    assert.strictEqual(await knex.schema.hasColumn('knex_sales', 'note'), true);
    await knex.schema.dropTable('knex_sales');
    assert.strictEqual(await knex.schema.hasTable('knex_sales'), false);
    console.log('knex: every step passed');
  } finally {
    await knex.destroy();
  }
}

main().catch((e) => {
  console.error('FAIL:', e.stack || e);
  process.exit(1);
});
