{#- The raw layer: external tables over the landing directory, one per change stream.
    Landed files are never rewritten; a new batch is a new file, so the tables only need re-pointing
    (cheap: external tables own no data, dropping one deletes no file) and refreshing. -#}

{% macro raw_ride_events_columns() -%}
  batch_id int, op string, ride_id string, rider_id string, city string, requested_at string,
  pickup_zone string, dropoff_zone string, status string, fare string, event_ts string
{%- endmacro %}

{% macro raw_assignment_events_columns() -%}
  batch_id int, assignment_id string, ride_id string, driver_id string, assigned_at string,
  event_ts string, deleted string
{%- endmacro %}

{% macro register_landing_tables() %}
  {%- set schema = var('raw_schema') -%}
  {%- set landing = var('landing_dir') -%}
  {%- do run_query('create schema if not exists ' ~ schema) -%}
  {%- set streams = [
        ('ride_events', raw_ride_events_columns(), "using json"),
        ('assignment_events', raw_assignment_events_columns(), "using csv options (header 'true')"),
      ] -%}
  {%- for name, columns, format in streams -%}
    {%- do run_query('drop table if exists ' ~ schema ~ '.' ~ name) -%}
    {%- do run_query('create table ' ~ schema ~ '.' ~ name ~ ' (' ~ columns ~ ') ' ~ format
                     ~ " location '" ~ landing ~ '/' ~ name ~ "'") -%}
  {%- endfor -%}
  {#- The hook's own statement (a hook must run one). -#}
  show tables in {{ schema }}
{% endmacro %}
