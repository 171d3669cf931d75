// sequelize 6 (over node-postgres) against a started tallyd, a model
// workflow: connect (its type look-up at connect), define a model with an
// auto-increment primary key and sync({ force: true }) (DROP, CREATE, index
// reflection), create and bulkCreate, grouped findAll with sum and count,
// count with where, update, destroy, a managed transaction, and reflection:
// showAllTables and describeTable. The model keeps sequelize's default
// createdAt/updatedAt timestamps, timestamptz columns that node-postgres
// fills from Date objects ('2024-01-01 10:00:00.000 +00:00'): they round-trip
// to the millisecond, updatedAt moves on update, and a query with a Date
// parameter compares and groups them. The expected values are what
// PostgreSQL 15 answers to the same calls. Run through
// tests/clients/tallyd_harness.py with NODE_PATH holding sequelize and pg.
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
const { Sequelize, DataTypes, Op } = requireTool('sequelize');

async function main() {
  const sequelize = new Sequelize(process.env.TALLY_TEST_DB, process.env.TALLY_TEST_TRUST_USER, null, {
    host: process.env.TALLY_TEST_HOST,
    port: Number(process.env.TALLY_TEST_PORT),
    dialect: 'postgres',
    logging: false,
    pool: { max: 2, min: 0 },
  });
  try {
    await sequelize.authenticate();
    const Sale = sequelize.define('Sale', {
      id: { type: DataTypes.INTEGER, autoIncrement: true, primaryKey: true },
      region: { type: DataTypes.STRING(40), allowNull: false },
      amount: DataTypes.INTEGER,
      price: DataTypes.DECIMAL(10, 2),
      day: DataTypes.DATEONLY,
      ok: { type: DataTypes.BOOLEAN, defaultValue: true },
    }, { tableName: 'seq_sales' });
    await Sale.sync({ force: true });

    const before = new Date();
    const first = await Sale.create({ region: 'north', amount: 10, price: '1.50', day: '2024-01-01' });
    assert.strictEqual(first.id, 1);
    assert.strictEqual(first.ok, true);
    assert.ok(first.createdAt instanceof Date && first.createdAt.getTime() === first.updatedAt.getTime());
    // What was stored is what sequelize sent, to the millisecond.
    const stored = await Sale.findByPk(1);
    assert.strictEqual(stored.createdAt.getTime(), first.createdAt.getTime());
    assert.strictEqual(stored.updatedAt.getTime(), first.updatedAt.getTime());
    assert.ok(stored.createdAt.getTime() >= before.getTime() - 1000);
    const more = await Sale.bulkCreate([
      { region: 'south', amount: 20, price: '2.25', day: '2024-01-02', ok: false },
      { region: 'north', amount: 5 },
      { region: 'east', price: '9.99', day: '2024-01-03' },
    ]);
    assert.deepStrictEqual(more.map((s) => s.id), [2, 3, 4]);

    const groups = await Sale.findAll({
      attributes: ['region', [sequelize.fn('sum', sequelize.col('amount')), 'total'],
        [sequelize.fn('count', sequelize.col('id')), 'n']],
      group: ['region'],
      order: [['region', 'ASC']],
      raw: true,
    });
    assert.deepStrictEqual(groups, [
      { region: 'east', total: null, n: '1' },
      { region: 'north', total: '15', n: '2' },
      { region: 'south', total: '20', n: '1' },
    ]);
    assert.strictEqual(await Sale.count({ where: { amount: { [Op.gte]: 10 } } }), 2);
    const found = await Sale.findOne({ where: { region: 'south' } });
    assert.strictEqual(found.price, '2.25');
    assert.strictEqual(found.day, '2024-01-02');

    // Timestamps given explicitly: Date parameters, read back as the same instants.
    const fixed = new Date(Date.UTC(2024, 0, 1, 10, 0, 0, 123));
    await Sale.update({ createdAt: fixed }, { where: { region: 'south' }, silent: true });
    const again = await Sale.findOne({ where: { region: 'south' } });
    assert.strictEqual(again.createdAt.toISOString(), '2024-01-01T10:00:00.123Z');
    assert.strictEqual(await Sale.count({ where: { createdAt: { [Op.lt]: new Date(Date.UTC(2024, 0, 2)) } } }), 1);
    assert.strictEqual(await Sale.count({ where: { createdAt: fixed } }), 1);
    const [shown] = await sequelize.query(
      "SELECT \"createdAt\"::text AS text FROM seq_sales WHERE region = 'south'", { type: 'SELECT' });
    assert.strictEqual(shown.text, '2024-01-01 10:00:00.123+00');
    const byDay = await Sale.findAll({
      attributes: [[sequelize.fn('date_trunc', 'day', sequelize.col('createdAt')), 'day'],
        [sequelize.fn('count', sequelize.col('id')), 'n']],
      group: [sequelize.fn('date_trunc', 'day', sequelize.col('createdAt'))],
      order: [[sequelize.fn('date_trunc', 'day', sequelize.col('createdAt')), 'ASC']],
      raw: true,
    });
    assert.strictEqual(byDay.length, 2);
    assert.strictEqual(byDay[0].day.toISOString(), '2024-01-01T00:00:00.000Z');
    assert.strictEqual(byDay[0].n, '1');
    assert.strictEqual(byDay[1].n, '3');

    await sequelize.transaction(async (t) => {
      const [updated] = await Sale.update({ ok: false }, { where: { region: 'north' }, transaction: t });
      assert.strictEqual(updated, 2);
      const destroyed = await Sale.destroy({ where: { amount: null }, transaction: t });
      assert.strictEqual(destroyed, 1);
    });
    const left = await Sale.findAll({ attributes: ['id', 'ok'], order: [['id', 'ASC']], raw: true });
    assert.deepStrictEqual(left, [{ id: 1, ok: false }, { id: 2, ok: false }, { id: 3, ok: false }]);
    // The update moved updatedAt on and left createdAt alone.
    const updated = await Sale.findByPk(1);
    assert.strictEqual(updated.createdAt.getTime(), first.createdAt.getTime());
    assert.ok(updated.updatedAt.getTime() >= first.updatedAt.getTime());

    const qi = sequelize.getQueryInterface();
    const tables = await qi.showAllTables();
    assert.ok(tables.includes('seq_sales'), JSON.stringify(tables));
    const described = await qi.describeTable('seq_sales');
    const shape = Object.fromEntries(Object.entries(described).map(([name, c]) =>
      [name, [c.type, c.allowNull, c.defaultValue, c.primaryKey]]));
    assert.deepStrictEqual(shape, {
      id: ['INTEGER', false, 'nextval(seq_sales_id_seq::regclass)', true],
      region: ['CHARACTER VARYING(40)', false, null, false],
      amount: ['INTEGER', true, null, false],
      price: ['NUMERIC', true, null, false],
      day: ['DATE', true, null, false],
      ok: ['BOOLEAN', true, true, false],
      createdAt: ['TIMESTAMP WITH TIME ZONE', false, null, false],
      updatedAt: ['TIMESTAMP WITH TIME ZONE', false, null, false],
    });
    await Sale.drop();
    assert.ok(!(await qi.showAllTables()).includes('seq_sales'));
    console.log('sequelize: every step passed');
  } finally {
    await sequelize.close();
  }
}

main().catch((e) => {
  console.error('FAIL:', e.stack || e);
  process.exit(1);
});
