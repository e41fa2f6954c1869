-- One row per driver assignment (at most one per ride), same rules as rides (a revoked assignment stays,
-- flagged is_deleted); partitioned by day.
{{ config(
    unique_key='assignment_id',
    precombine_key='event_ts',
    partition_by='assigned_date',
    clean={'policy': 'KEEP_LATEST_FILE_VERSIONS', 'retained': 1},
    hoodie_options={'hoodie.parquet.compression.codec': 'snappy'},
) }}

with events as (
    select * from {{ ref('stg_assignment_events') }}
    {% if is_incremental() %}
    where batch_id > (select coalesce(max(batch_id), 0) from {{ this }})
    {% endif %}
),

newest as (
    select *, row_number() over (partition by assignment_id order by event_ts desc, batch_id desc) as event_rank
    from events
)

select assignment_id, ride_id, driver_id, assigned_at, assigned_date, event_ts, batch_id, is_deleted
from newest
where event_rank = 1
