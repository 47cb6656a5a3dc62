import { useId, type CSSProperties, type ReactNode } from 'react';
import styles from './game-controls.module.css';

export interface SliderFieldProps {
  label: string;
  value: number;
  min: number;
  max: number;
  step: number;
  onChange: (value: number) => void;
  disabled?: boolean;
  /** display is the value as shown next to the label (the number itself by default). */
  display?: ReactNode;
  /** valueText is what assistive technology reads for the value. */
  valueText?: string;
  /** fill colours the track up to the thumb, for sliders such as Dice's roll-under target. */
  tone?: 'plain' | 'split';
}

/** SliderField is a labelled range input (keyboard: arrows, Page Up/Down, Home/End) that shows its value. */
export function SliderField({
  label,
  value,
  min,
  max,
  step,
  onChange,
  disabled,
  display,
  valueText,
  tone = 'plain',
}: SliderFieldProps) {
  const id = useId();
  const percent = ((value - min) / (max - min)) * 100;
  return (
    <div className={styles.field}>
      <div className={styles.sliderHead}>
        <label className={styles.label} htmlFor={id}>
          {label}
        </label>
        <output className={styles.sliderValue} htmlFor={id}>
          {display ?? value}
        </output>
      </div>
      <input
        id={id}
        className={`${styles.slider} ${tone === 'split' ? styles.sliderSplit : ''}`}
        type="range"
        min={min}
        max={max}
        step={step}
        value={value}
        disabled={disabled}
        aria-valuetext={valueText}
        style={{ '--fill': `${percent}%` } as CSSProperties}
        onChange={(event) => {
          onChange(Number(event.target.value));
        }}
      />
    </div>
  );
}
