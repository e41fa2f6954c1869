-- One row per ride: its newest event wins, also against rows stored by earlier builds (precombine_key).
-- A deleted ride stays as a row flagged is_deleted (a soft delete): downstream models read this table's
-- changes (hoodpy_changes), and a change read sees a flagged row where a removed one would leave no trace;
-- the flag also keeps an older event landing after the delete from bringing the ride back. Each build
-- reads only the batches landed since the last one.
{{ config(
    unique_key='ride_id',
    precombine_key='event_ts',
    partition_by='city',
    clustering={
        'order': ['pickup_zone', 'requested_at'],
        'strategy': 'z-order',
        'inline': true,
        'max_commits': 1,
    },
    clean={'policy': 'KEEP_LATEST_COMMITS', 'retained': 1},
    hoodie_options={'hoodie.parquet.compression.codec': 'snappy'},
) }}

with events as (
    select * from {{ ref('stg_ride_events') }}
    {% if is_incremental() %}
    where batch_id > (select coalesce(max(batch_id), 0) from {{ this }})
    {% endif %}
),

newest as (
    -- Several new batches at once: the newest event per ride (a tie is a redelivery; the later batch wins).
    select *, row_number() over (partition by ride_id order by event_ts desc, batch_id desc) as event_rank
    from events
)

select ride_id, rider_id, city, requested_at, pickup_zone, dropoff_zone, status, fare, event_ts, batch_id,
       is_deleted
from newest
where event_rank = 1
