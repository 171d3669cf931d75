// node-postgres (the `pg` package, as knex and sequelize use it) against a
// started tallyd: it sends every parameter untyped (OID 0) through the
// extended protocol, so INSERT, UPDATE, DELETE and SELECT with $n depend on
// the server inferring their types. Expected rows were checked against
// PostgreSQL 15 with the same client. Run through tallyd_harness.py.
'use strict';
const assert = require('assert');
const { Client } = require('pg');

function config() {
  return {
    host: process.env.TALLY_TEST_HOST,
    port: Number(process.env.TALLY_TEST_PORT),
    user: process.env.TALLY_TEST_TRUST_USER,
    database: process.env.TALLY_TEST_DB,
  };
}

async function main() {
  const c = new Client(config());
  await c.connect();
  await c.query('DROP TABLE IF EXISTS node_items');
  await c.query('CREATE TABLE node_items (id int, name text, price float8, day date, ok boolean, big bigint, amount numeric(10,2))');
  const insert = 'INSERT INTO node_items VALUES ($1, $2, $3, $4, $5, $6, $7)';
  let r = await c.query(insert, [1, 'apple', 1.5, '2023-06-01', true, '9007199254740993', '12.34']);
  assert.strictEqual(r.command, 'INSERT');
  assert.strictEqual(r.rowCount, 1);
  // A named statement, parsed once and bound again (knex's and pg's `name`).
  const named = { name: 'insert_item', text: insert };
  await c.query({ ...named, values: [2, null, null, new Date(Date.UTC(2023, 5, 2)), false, 5, 1] });
  await c.query({ ...named, values: [3, 'pear', 2, null, null, null, null] });
  await c.query({ ...named, values: [4, 'apple', 0.25, '2023-06-03', true, -7, '-0.5'] });

  r = await c.query('SELECT id, name, price, day::text AS day, ok, big, amount FROM node_items WHERE id >= $1 ORDER BY id', [1]);
  assert.deepStrictEqual(r.rows, [
    { id: 1, name: 'apple', price: 1.5, day: '2023-06-01', ok: true, big: '9007199254740993', amount: '12.34' },
    { id: 2, name: null, price: null, day: '2023-06-02', ok: false, big: '5', amount: '1.00' },
    { id: 3, name: 'pear', price: 2, day: null, ok: null, big: null, amount: null },
    { id: 4, name: 'apple', price: 0.25, day: '2023-06-03', ok: true, big: '-7', amount: '-0.50' },
  ]);

  r = await c.query('UPDATE node_items SET name = $1 WHERE id = $2', ['plum', 2]);
  assert.strictEqual(r.rowCount, 1);
  r = await c.query('DELETE FROM node_items WHERE id = $1', [3]);
  assert.strictEqual(r.rowCount, 1);
  r = await c.query('SELECT name, count(*)::int AS n, sum(amount) AS total FROM node_items WHERE name <> $1 GROUP BY name ORDER BY name', ['none']);
  assert.deepStrictEqual(r.rows, [{ name: 'apple', n: 2, total: '11.84' }, { name: 'plum', n: 1, total: '1.00' }]);

  // A wrong value is the statement's error; the session goes on.
  await assert.rejects(c.query(insert, [5, 'x', 'not a number', null, null, null, null]), (e) => e.code === '22P02');
  r = await c.query('SELECT count(*)::int AS n FROM node_items');
  assert.deepStrictEqual(r.rows, [{ n: 3 }]);

  // Transactions as an ORM drives them.
  await c.query('BEGIN');
  await c.query(insert, [6, 'kiwi', 3, '2023-06-04', true, 1, 1]);
  await c.query('ROLLBACK');
  r = await c.query('SELECT count(*)::int AS n FROM node_items WHERE name = $1', ['kiwi']);
  assert.deepStrictEqual(r.rows, [{ n: 0 }]);

  await c.query('DROP TABLE node_items');
  await c.end();
  console.log('node_pg_test: ok');
}

main().catch((e) => {
  console.error('node_pg_test failed:', e);
  process.exit(1);
});
