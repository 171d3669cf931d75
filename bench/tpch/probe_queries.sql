-- TPC-H Q101
select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300 order by l_orderkey;

-- TPC-H Q102
select count(*) from orders where o_orderkey in (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300);

-- TPC-H Q103
select l_shipmode, count(*), sum(l_extendedprice) from lineitem where l_quantity in (1, 2, 3, 5, 8, 13, 21, 34) and l_suppkey in (1, 7, 49, 343, 2401, 16807, 99991) group by l_shipmode order by l_shipmode;

-- TPC-H Q104
select count(*) from lineitem where l_partkey in (11, 22, 33, 44, 55, 66, 77, 88, 99, 111, 222, 333, 444, 555, 666, 777, 888, 999, 1111, 2222, 3333, 4444, 5555, 6666, 7777, 8888, 9999, 11111, 22222, 33333, 44444, 55555);

-- TPC-H Q7
select
	supp_nation,
	cust_nation,
	l_year,
	sum(volume) as revenue
from
	(
		select
			n1.n_name as supp_nation,
			n2.n_name as cust_nation,
			extract(year from l_shipdate) as l_year,
			l_extendedprice * (1 - l_discount) as volume
		from
			supplier,
			lineitem,
			orders,
			customer,
			nation n1,
			nation n2
		where
			s_suppkey = l_suppkey
			and o_orderkey = l_orderkey
			and c_custkey = o_custkey
			and s_nationkey = n1.n_nationkey
			and c_nationkey = n2.n_nationkey
			and (
				(n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY')
				or (n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE')
			)
			and l_shipdate between date '1995-01-01' and date '1996-12-31'
	) as shipping
group by
	supp_nation,
	cust_nation,
	l_year
order by
	supp_nation,
	cust_nation,
	l_year;

-- TPC-H Q9
select
	nation,
	o_year,
	sum(amount) as sum_profit
from
	(
		select
			n_name as nation,
			extract(year from o_orderdate) as o_year,
			l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
		from
			part,
			supplier,
			lineitem,
			partsupp,
			orders,
			nation
		where
			s_suppkey = l_suppkey
			and ps_suppkey = l_suppkey
			and ps_partkey = l_partkey
			and p_partkey = l_partkey
			and o_orderkey = l_orderkey
			and s_nationkey = n_nationkey
			and p_name like '%green%'
	) as profit
group by
	nation,
	o_year
order by
	nation,
	o_year desc;

-- TPC-H Q16
select
	p_brand,
	p_type,
	p_size,
	count(distinct ps_suppkey) as supplier_cnt
from
	partsupp,
	part
where
	p_partkey = ps_partkey
	and p_brand <> 'Brand#45'
	and p_type not like 'MEDIUM POLISHED%'
	and p_size in (49, 14, 23, 45, 19, 3, 36, 9)
	and ps_suppkey not in (
		select
			s_suppkey
		from
			supplier
		where
			s_comment like '%Customer%Complaints%'
	)
group by
	p_brand,
	p_type,
	p_size
order by
	supplier_cnt desc,
	p_brand,
	p_type,
	p_size;

-- TPC-H Q18
select
	c_name,
	c_custkey,
	o_orderkey,
	o_orderdate,
	o_totalprice,
	sum(l_quantity)
from
	customer,
	orders,
	lineitem
where
	o_orderkey in (
		select
			l_orderkey
		from
			lineitem
		group by
			l_orderkey having
				sum(l_quantity) > 300
	)
	and c_custkey = o_custkey
	and o_orderkey = l_orderkey
group by
	c_name,
	c_custkey,
	o_orderkey,
	o_orderdate,
	o_totalprice
order by
	o_totalprice desc,
	o_orderdate
limit 100;

-- TPC-H Q19
select
	sum(l_extendedprice* (1 - l_discount)) as revenue
from
	lineitem,
	part
where
	(
		p_partkey = l_partkey
		and p_brand = 'Brand#12'
		and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
		and l_quantity >= 1 and l_quantity <= 1 + 10
		and p_size between 1 and 5
		and l_shipmode in ('AIR', 'AIR REG')
		and l_shipinstruct = 'DELIVER IN PERSON'
	)
	or
	(
		p_partkey = l_partkey
		and p_brand = 'Brand#23'
		and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
		and l_quantity >= 10 and l_quantity <= 10 + 10
		and p_size between 1 and 10
		and l_shipmode in ('AIR', 'AIR REG')
		and l_shipinstruct = 'DELIVER IN PERSON'
	)
	or
	(
		p_partkey = l_partkey
		and p_brand = 'Brand#34'
		and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
		and l_quantity >= 20 and l_quantity <= 20 + 10
		and p_size between 1 and 15
		and l_shipmode in ('AIR', 'AIR REG')
		and l_shipinstruct = 'DELIVER IN PERSON'
	);

-- Parts of TPC-H Q11, Q13 and Q22 on their own (Q301-Q305).

-- TPC-H Q301
select sum(ps_supplycost * ps_availqty) * 0.0001000000 as total
from partsupp, supplier, nation
where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = 'GERMANY';

-- TPC-H Q302
select c_count, count(*) as n from (
select c_custkey, count(o_orderkey) as c_count
from customer left outer join orders on c_custkey = o_custkey and o_comment not like '%special%requests%'
group by c_custkey) c group by c_count order by c_count;

-- TPC-H Q303
select count(*) as n, sum(o_custkey) as s from orders where o_comment not like '%special%requests%';

-- TPC-H Q304
select o_custkey, count(*) as n from orders where o_comment not like '%special%requests%' group by o_custkey order by n desc, o_custkey limit 10;

-- TPC-H Q305
select count(*) as n, avg(c_acctbal) as a from customer where substring(c_phone from 1 for 2) in ('13', '31', '23', '29', '30', '18', '17');

-- SELECT DISTINCT and row comparisons with a subquery over lineitem (Q401-Q405).

-- TPC-H Q401
select count(*) as n from (select distinct l_orderkey from lineitem) s;

-- TPC-H Q402
select count(*) as n from (select distinct l_partkey, l_suppkey from lineitem) s;

-- TPC-H Q403
select distinct l_returnflag, l_linestatus from lineitem order by l_returnflag, l_linestatus;

-- TPC-H Q404
select count(*) as n from (select distinct on (l_orderkey) l_orderkey, l_partkey from lineitem order by l_orderkey, l_partkey desc) s;

-- TPC-H Q405
select count(*) as n from partsupp where (ps_partkey, ps_suppkey) not in (select l_partkey, l_suppkey from lineitem where l_shipdate > date '1998-06-01');
