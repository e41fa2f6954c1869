{#-- append / insert: Hudi's insert (no index lookup; keys are not de-duplicated against the table). On a
     plain Spark table: insert into. --#}
{% macro hoodpy__get_incremental_append_sql(arg_dict) %}
  {%- if arg_dict['target_relation'].is_hoodpy -%}
    {{ return(hoodpy_write_batch(arg_dict, 'append')) }}
  {%- endif -%}
  {{ return(get_insert_into_sql(arg_dict['target_relation'], arg_dict['temp_relation'], arg_dict['dest_columns'])) }}
{% endmacro %}

{% macro get_incremental_insert_sql(arg_dict) %}
  {{ return(adapter.dispatch('get_incremental_append_sql', 'dbt')(arg_dict)) }}
{% endmacro %}
