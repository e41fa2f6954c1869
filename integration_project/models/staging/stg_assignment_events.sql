-- Typed driver-assignment events, one per assignment and batch (the newest in the batch).
with typed as (
    select
        batch_id,
        assignment_id,
        ride_id,
        driver_id,
        to_timestamp(assigned_at, "yyyy-MM-dd'T'HH:mm:ssX") as assigned_at,
        to_timestamp(event_ts, "yyyy-MM-dd'T'HH:mm:ssX") as event_ts,
        lower(deleted) = 'true' as is_deleted
    from {{ source('raw', 'assignment_events') }}
),

ranked as (
    select *, row_number() over (partition by batch_id, assignment_id order by event_ts desc) as event_rank
    from typed
)

select assignment_id, ride_id, driver_id, assigned_at, to_date(assigned_at) as assigned_date, event_ts,
       batch_id, is_deleted
from ranked
where event_rank = 1
