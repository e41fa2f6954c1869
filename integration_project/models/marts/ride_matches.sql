-- Rides matched with their current driver, kept current from the two upstream tables' changes only.
--
-- A join fed by changes needs state: when only a ride changes, its driver comes from the row this model
-- already holds, and vice versa. So the table holds one row per ride either side has mentioned, with both
-- sides' columns; is_matched marks the rides that are live and have a live assignment (the join's result).
-- Each build reads the records rides and driver_assignments committed since the instants this model's last
-- commit consumed (hoodpy_changes), plus this table's rows for the rides they touch.
{{ config(
    unique_key='ride_id',
    hoodie_options={'hoodie.parquet.compression.codec': 'snappy'},
) }}

with ride_changes as (
    select ride_id, rider_id, city, requested_at, status, fare, is_deleted
    from {{ hoodpy_changes(ref('rides')) }}
),

assignment_changes as (
    -- Per ride the change that decides: a live assignment before a revoked one, then the newest.
    select * from (
        select ride_id, assignment_id, driver_id, assigned_at, is_deleted,
               row_number() over (partition by ride_id order by is_deleted, event_ts desc) as pick
        from {{ hoodpy_changes(ref('driver_assignments')) }}
    ) where pick = 1
),

touched as (
    select ride_id from ride_changes
    union
    select ride_id from assignment_changes
),

previous as (
    {% if is_incremental() %}
    select p.* from {{ this }} as p left semi join touched as t on t.ride_id = p.ride_id
    {% else %}
    select * from (
        select cast(null as string) as ride_id, cast(null as string) as rider_id, cast(null as string) as city,
               cast(null as timestamp) as requested_at, cast(null as string) as status,
               cast(null as decimal(10, 2)) as fare, cast(null as boolean) as ride_deleted,
               cast(null as string) as assignment_id, cast(null as string) as driver_id,
               cast(null as timestamp) as assigned_at
    ) where false
    {% endif %}
),

combined as (
    select
        t.ride_id,
        r.ride_id is not null as ride_changed,
        -- a live assignment change replaces the stored one; a revoked one clears it if it is the stored one
        case when a.ride_id is null then 'kept'
             when not a.is_deleted then 'changed'
             when p.assignment_id is null or a.assignment_id = p.assignment_id then 'revoked'
             else 'kept' end as assignment,
        r.rider_id as r_rider_id, r.city as r_city, r.requested_at as r_requested_at, r.status as r_status,
        r.fare as r_fare, r.is_deleted as r_deleted,
        a.assignment_id as a_assignment_id, a.driver_id as a_driver_id, a.assigned_at as a_assigned_at,
        p.rider_id, p.city, p.requested_at, p.status, p.fare, p.ride_deleted,
        p.assignment_id, p.driver_id, p.assigned_at
    from touched as t
    left join ride_changes as r on r.ride_id = t.ride_id
    left join assignment_changes as a on a.ride_id = t.ride_id
    left join previous as p on p.ride_id = t.ride_id
),

state as (
    select
        ride_id,
        if(ride_changed, r_rider_id, rider_id) as rider_id,
        if(ride_changed, r_city, city) as city,
        if(ride_changed, r_requested_at, requested_at) as requested_at,
        if(ride_changed, r_status, status) as status,
        if(ride_changed, r_fare, fare) as fare,
        if(ride_changed, r_deleted, ride_deleted) as ride_deleted,
        case assignment when 'changed' then a_assignment_id when 'kept' then assignment_id end as assignment_id,
        case assignment when 'changed' then a_driver_id when 'kept' then driver_id end as driver_id,
        case assignment when 'changed' then a_assigned_at when 'kept' then assigned_at end as assigned_at
    from combined
)

select
    ride_id, city, rider_id, assignment_id, driver_id, status, requested_at, assigned_at,
    unix_timestamp(assigned_at) - unix_timestamp(requested_at) as wait_seconds,
    fare,
    to_date(requested_at) as ride_date,
    ride_deleted,
    coalesce(requested_at is not null and not ride_deleted and assignment_id is not null, false) as is_matched
from state
