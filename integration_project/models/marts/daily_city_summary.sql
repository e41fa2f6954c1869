-- Per day and city: matched rides, how they ended, revenue and waiting time.
--
-- Each build recomputes only the (day, city) groups holding a ride_matches row committed since its last
-- build (hoodpy_changes): their totals are aggregated again from ride_matches, and a group left without a
-- matched ride is deleted. A ride's city and request time never change (the generator's invariant); a
-- change that moved a ride between groups would need its before-image, which change data capture gives.
{{ config(
    unique_key=['ride_date', 'city'],
    delete_column='is_empty',
    hoodie_options={'hoodie.parquet.compression.codec': 'snappy'},
) }}

with touched as (
    select distinct ride_date, city
    from {{ hoodpy_changes(ref('ride_matches')) }}
    where ride_date is not null
),

totals as (
    select
        m.ride_date,
        m.city,
        count(*) as matched_rides,
        count_if(m.status = 'completed') as completed_rides,
        count_if(m.status = 'cancelled') as cancelled_rides,
        coalesce(sum(if(m.status = 'completed', m.fare, null)), 0) as revenue,
        sum(m.wait_seconds) as total_wait_seconds
    from {{ ref('ride_matches') }} as m
    left semi join touched as t on t.ride_date = m.ride_date and t.city = m.city
    where m.is_matched
    group by m.ride_date, m.city
)

select
    t.ride_date,
    t.city,
    coalesce(s.matched_rides, 0) as matched_rides,
    coalesce(s.completed_rides, 0) as completed_rides,
    coalesce(s.cancelled_rides, 0) as cancelled_rides,
    coalesce(s.revenue, 0) as revenue,
    coalesce(s.total_wait_seconds, 0) as total_wait_seconds,
    s.ride_date is null as is_empty
from touched as t
left join totals as s on s.ride_date = t.ride_date and s.city = t.city
