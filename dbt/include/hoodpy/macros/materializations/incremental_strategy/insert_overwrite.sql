{#-- insert_overwrite: replace the partitions present in the batch (the whole table when unpartitioned), as
     a replacecommit. On a plain Spark table: insert overwrite (dynamic partition overwrite). --#}
{% macro hoodpy__get_incremental_insert_overwrite_sql(arg_dict) %}
  {%- if arg_dict['target_relation'].is_hoodpy -%}
    {{ return(hoodpy_write_batch(arg_dict, 'insert_overwrite')) }}
  {%- endif -%}
  {%- set dest_cols_csv = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
  {%- call statement('set_partition_overwrite_mode') -%}
    set spark.sql.sources.partitionOverwriteMode = DYNAMIC
  {%- endcall -%}
  {% set sql %}
    insert overwrite table {{ arg_dict['target_relation'] }}
    {{ partition_cols(label="partition") }}
    select {{ dest_cols_csv }} from {{ arg_dict['temp_relation'] }}
  {% endset %}
  {{ return(sql) }}
{% endmacro %}
