{#-- append / insert: Hudi's insert (no index lookup; keys are not de-duplicated against the table). On a
     plain Spark table: insert into. --#}
{% macro hoodpy__get_incremental_append_sql(arg_dict) %}
  {%- if arg_dict['target_relation'].is_hoodpy -%}
    {{ return(hoodpy_write_batch(arg_dict, 'append')) }}
  {%- endif -%}
  {%- set dest_cols_csv = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
  {% set sql %}
    insert into {{ arg_dict['target_relation'] }} ({{ dest_cols_csv }})
    select {{ dest_cols_csv }} from {{ arg_dict['temp_relation'] }}
  {% endset %}
  {{ return(sql) }}
{% endmacro %}

{% macro get_incremental_insert_sql(arg_dict) %}
  {{ return(adapter.dispatch('get_incremental_append_sql', 'dbt')(arg_dict)) }}
{% endmacro %}
