-- ride_matches and daily_city_summary are fed by changes only; each must equal what a full recompute from
-- rides and driver_assignments gives. Returns the rows that differ (either way).
with live_rides as (
    select * from {{ ref('rides') }} where not is_deleted
),

live_assignments as (
    select * from {{ ref('driver_assignments') }} where not is_deleted
),

matches as (
    select r.ride_id, r.city, r.rider_id, a.assignment_id, a.driver_id, r.status, r.requested_at,
           a.assigned_at, unix_timestamp(a.assigned_at) - unix_timestamp(r.requested_at) as wait_seconds, r.fare
    from live_rides as r
    join live_assignments as a on a.ride_id = r.ride_id
),

stored_matches as (
    select ride_id, city, rider_id, assignment_id, driver_id, status, requested_at, assigned_at, wait_seconds,
           fare
    from {{ ref('ride_matches') }}
    where is_matched
),

summary as (
    select to_date(requested_at) as ride_date, city, count(*) as matched_rides,
           count_if(status = 'completed') as completed_rides, count_if(status = 'cancelled') as cancelled_rides,
           coalesce(sum(if(status = 'completed', fare, null)), 0) as revenue, sum(wait_seconds) as total_wait_seconds
    from matches
    group by to_date(requested_at), city
),

stored_summary as (
    select ride_date, city, matched_rides, completed_rides, cancelled_rides, revenue, total_wait_seconds
    from {{ ref('daily_city_summary') }}
)

select 'ride_matches' as model, ride_id as row_key, 'missing or different' as problem
from (select * from matches except select * from stored_matches)
union all
select 'ride_matches', ride_id, 'unexpected'
from (select * from stored_matches except select * from matches)
union all
select 'daily_city_summary', concat(ride_date, ' ', city), 'missing or different'
from (select * from summary except select * from stored_summary)
union all
select 'daily_city_summary', concat(ride_date, ' ', city), 'unexpected'
from (select * from stored_summary except select * from summary)
