-- Rides matched with their current driver, and how long the match took. Rebuilt from the two tables on
-- every build (a few hundred rows): a deleted ride or revoked assignment simply disappears.
{{ config(
    materialized='table',
    unique_key='ride_id',
    partition_by='city',
    hoodie_options={'hoodie.parquet.compression.codec': 'snappy'},
) }}

select
    r.ride_id,
    r.city,
    r.rider_id,
    a.assignment_id,
    a.driver_id,
    r.status,
    r.requested_at,
    a.assigned_at,
    unix_timestamp(a.assigned_at) - unix_timestamp(r.requested_at) as wait_seconds,
    r.fare
from {{ ref('rides') }} as r
join {{ ref('driver_assignments') }} as a on a.ride_id = r.ride_id
