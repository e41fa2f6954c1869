{#-- merge: dbt's name for an upsert; merge_update_columns / merge_exclude_columns limit which columns a
     matched row takes from the batch. --#}
{% macro hoodpy__get_incremental_merge_sql(arg_dict) %}
  {%- set update_columns = config.get('merge_update_columns') -%}
  {%- set exclude_columns = config.get('merge_exclude_columns') -%}
  {%- if exclude_columns -%}
    {%- set excluded = exclude_columns | map('lower') | list -%}
    {%- set update_columns = arg_dict['dest_columns'] | map(attribute='name')
                             | reject('in', excluded) | list -%}
  {%- endif -%}
  {{ return(hoodpy_write_batch(arg_dict, 'merge', update_columns)) }}
{% endmacro %}
