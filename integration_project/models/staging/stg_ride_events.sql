-- Typed ride events, one per ride and batch: the newest event of each ride in the batch (a batch holds
-- redeliveries and out-of-order events). Older batches stay: rides filters on batch_id itself.
with typed as (
    select
        batch_id,
        ride_id,
        rider_id,
        lower(city) as city,
        to_timestamp(requested_at, "yyyy-MM-dd'T'HH:mm:ssX") as requested_at,
        pickup_zone,
        dropoff_zone,
        status,
        cast(fare as decimal(10, 2)) as fare,
        to_timestamp(event_ts, "yyyy-MM-dd'T'HH:mm:ssX") as event_ts,
        op = 'd' as is_deleted
    from {{ source('raw', 'ride_events') }}
),

ranked as (
    select *, row_number() over (partition by batch_id, ride_id order by event_ts desc) as event_rank
    from typed
)

select ride_id, rider_id, city, requested_at, pickup_zone, dropoff_zone, status, fare, event_ts, batch_id,
       is_deleted
from ranked
where event_rank = 1
