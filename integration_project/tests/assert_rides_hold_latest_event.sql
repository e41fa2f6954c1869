-- No late update won, no delete was missed: every ride holds the newest event landed for it, and a ride
-- whose newest event is a delete is flagged deleted. Returns the offending rides.
with newest_ts as (
    select ride_id, max(event_ts) as event_ts from {{ ref('stg_ride_events') }} group by ride_id
),

newest as (
    select e.ride_id, bool_or(e.is_deleted) as is_deleted, max(e.status) as status
    from {{ ref('stg_ride_events') }} as e
    join newest_ts as n on n.ride_id = e.ride_id and n.event_ts = e.event_ts
    group by e.ride_id
)

select r.ride_id, 'an older event won' as problem
from {{ ref('rides') }} as r
join newest_ts as n on n.ride_id = r.ride_id
where r.event_ts <> n.event_ts
union all
select n.ride_id, 'delete not applied'
from newest as n
join {{ ref('rides') }} as r on r.ride_id = n.ride_id
where n.is_deleted <> r.is_deleted
union all
select n.ride_id, 'ride missing'
from newest as n
left anti join {{ ref('rides') }} as r on r.ride_id = n.ride_id
