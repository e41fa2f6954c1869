-- Same check for driver assignments: the newest event per assignment is what the table holds.
with newest_ts as (
    select assignment_id, max(event_ts) as event_ts
    from {{ ref('stg_assignment_events') }}
    group by assignment_id
),

newest as (
    select e.assignment_id, bool_or(e.is_deleted) as is_deleted, max(e.driver_id) as driver_id
    from {{ ref('stg_assignment_events') }} as e
    join newest_ts as n on n.assignment_id = e.assignment_id and n.event_ts = e.event_ts
    group by e.assignment_id
)

select a.assignment_id, 'an older event won' as problem
from {{ ref('driver_assignments') }} as a
join newest as n on n.assignment_id = a.assignment_id
where n.is_deleted <> a.is_deleted or a.driver_id <> n.driver_id
union all
select n.assignment_id, 'assignment missing'
from newest as n
left anti join {{ ref('driver_assignments') }} as a on a.assignment_id = n.assignment_id
